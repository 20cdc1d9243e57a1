package durablebench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/client"
)

// durableOptions are the client options for router i: its address, the
// deployment's client certificate, quick reconnection.
func (sc *siftCluster) durableOptions(i int) client.DurableOptions {
	return client.DurableOptions{Options: client.Options{TLS: sc.env(i).ClientTLS}, Routers: []string{sc.addrs[i]},
		RetryTimeout: 2 * time.Minute, MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}
}

// Publisher connects a client.DurablePublisher to r0's pubend (to the
// replicas' routers, when it is replicated: the leader's takes it).
func (sc *siftCluster) Publisher(ctx context.Context, inFlight int) (Publisher, error) {
	opts := sc.durableOptions(0)
	for i, name := range sc.names {
		if i > 0 && slices.Contains(sc.replicas, name) {
			opts.Routers = append(opts.Routers, sc.addrs[i])
		}
	}
	p, err := client.NewDurablePublisher(ctx, client.DurablePublisherOptions{DurableOptions: opts,
		Pubend: pubend, Window: inFlight})
	if err != nil {
		return nil, fmt.Errorf("sift: %w", err)
	}
	sp := &siftPublisher{p: p}
	sc.mu.Lock()
	sc.pubs = append(sc.pubs, sp)
	sc.mu.Unlock()
	return sp, nil
}

type siftPublisher struct{ p *client.DurablePublisher }

func (p *siftPublisher) Publish(ctx context.Context, e match.Event) error {
	_, err := p.p.Publish(ctx, e)
	return err
}
func (p *siftPublisher) Flush(ctx context.Context) error { return p.p.Flush(ctx) }
func (p *siftPublisher) Close() error                    { return p.p.Close() }

// Subscribe registers sub at its SHB and starts its consuming goroutine.
func (sc *siftCluster) Subscribe(ctx context.Context, shb int, sub Sub, ack AckPolicy, deliver func(match.Event)) (Subscriber, error) {
	s := &siftSubscriber{sc: sc, router: sc.topo.SHB(shb), sub: sub, ack: ack, deliver: deliver, ct: client.CT{}}
	if err := s.Resume(ctx); err != nil {
		return nil, err
	}
	sc.mu.Lock()
	sc.subs = append(sc.subs, s)
	sc.mu.Unlock()
	return s, nil
}

// siftSubscriber consumes a client.DurableSubscription like an
// application keeping its CT: it advances the CT past every message and
// acknowledges it as its AckPolicy says. Pause
// closes the subscription (the SHB keeps it); Resume presents the CT.
type siftSubscriber struct {
	sc      *siftCluster
	router  int
	sub     Sub
	ack     AckPolicy
	deliver func(match.Event)

	mu   sync.Mutex
	ct   client.CT // owned by the consuming goroutine while it runs
	ds   *client.DurableSubscription
	stop chan struct{} // closed to end the consuming goroutine
	done chan struct{} // closed when it has ended
}

func (s *siftSubscriber) Resume(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ds != nil {
		return nil
	}
	var ct client.CT
	if len(s.ct) > 0 {
		ct = s.ct.Clone()
	}
	ds, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{DurableOptions: s.sc.durableOptions(s.router),
		ID: s.sub.ID, Filter: s.sub.Filter, CT: ct})
	if err != nil {
		return fmt.Errorf("sift: durable subscribe %s: %w", s.sub.ID, err)
	}
	s.ds, s.stop, s.done = ds, make(chan struct{}), make(chan struct{})
	go s.consume(ds, s.stop, s.done)
	return nil
}

// consume reads ds until stop or its end, then leaves the CT for the next
// Resume. It stops before the subscription is closed, so that no message
// it did not consume is counted in the CT.
func (s *siftSubscriber) consume(ds *client.DurableSubscription, stop, done chan struct{}) {
	defer close(done)
	s.mu.Lock()
	ct := s.ct.Clone()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.ct = ct
		s.mu.Unlock()
	}()
	var a acker
	idle := time.NewTicker(s.ack.Idle)
	defer idle.Stop()
	for {
		select {
		case m, ok := <-ds.Messages():
			if !ok {
				return
			}
			if m.Kind == client.DurableEvent {
				s.deliver(m.Event)
			}
			m.Advance(ct)
			if a.consumed(m.Kind, s.ack.Every) {
				ds.Ack(ct.Clone())
			}
		case now := <-idle.C:
			if a.due(now) {
				ds.Ack(ct.Clone())
			}
		case <-stop:
			return
		}
	}
}

// silenceAckPeriod bounds how often a subscriber acknowledges a CT that
// only silences advanced (the SHB sends an idle subscriber a silence every
// few tens of milliseconds; acknowledging each would cost the SHB a write
// and a sync per silence). sift sub --durable does the same.
const silenceAckPeriod = time.Second

// acker decides when a subscriber acknowledges: after every Every events,
// at the next idle tick when events were consumed since the last
// acknowledgement, and at most once a silenceAckPeriod for silences
// alone.
type acker struct {
	events  int       // events consumed since the last acknowledgement
	silent  bool      // silences or gaps consumed since then
	lastAck time.Time // when the last acknowledgement went
}

// consumed counts one message and reports whether to acknowledge now.
func (a *acker) consumed(k client.DurableKind, every int) bool {
	switch k {
	case client.DurableEvent:
		a.events++
	case client.DurableSilence, client.DurableGap:
		a.silent = true
	}
	if a.events >= every {
		a.events, a.silent, a.lastAck = 0, false, time.Now()
		return true
	}
	return false
}

// due reports whether an idle tick at now should acknowledge.
func (a *acker) due(now time.Time) bool {
	if a.events == 0 && (!a.silent || now.Sub(a.lastAck) < silenceAckPeriod) {
		return false
	}
	a.events, a.silent, a.lastAck = 0, false, now
	return true
}

func (s *siftSubscriber) Pause() error {
	s.mu.Lock()
	ds, stop, done := s.ds, s.stop, s.done
	s.ds = nil
	s.mu.Unlock()
	if ds == nil {
		return nil
	}
	close(stop)
	<-done
	return ds.Close()
}

func (s *siftSubscriber) Close() error { return s.Pause() }
