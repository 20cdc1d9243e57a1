package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// DurableDemoOptions configure DurableDemo; zero fields take the defaults
// beside them.
type DurableDemoOptions struct {
	Events int    // events per phase, three phases (default 3,000)
	Seed   uint64 // workload seed (default 1)
}

// durableAudit is the demo's durable subscriber: what it consumed, its
// checkpoint token, and the live subscription while connected.
type durableAudit struct {
	filter match.Filter
	mu     sync.Mutex
	got    []match.Event
	ct     client.CT
	sub    *client.DurableSubscription
	done   chan struct{} // closed when the consuming goroutine ends
}

// DurableDemo starts three routers in a chain, phb - mid - shb, with a
// pubend "trades" at phb and durable delivery on; a durable subscriber at
// shb consumes a first batch of events, disconnects, misses a second
// batch, reconnects with its checkpoint token and catches up, then gets a
// third batch live. It checks that the subscriber received exactly the
// matching events of all three batches, each once, in order, and prints
// each phase.
func DurableDemo(out io.Writer, opts DurableDemoOptions) error {
	if opts.Events <= 0 {
		opts.Events = 3000
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 1, Events: 3 * opts.Events}, opts.Seed)
	if err != nil {
		return fmt.Errorf("durable demo: %w", err)
	}
	events := numbered(w.Events)
	dir, err := os.MkdirTemp("", "sift-durable-demo")
	if err != nil {
		return fmt.Errorf("durable demo: %w", err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	names := []string{"phb", "mid", "shb"}
	m, err := local.StartMesh(ctx, dir, names, []local.Edge{{A: 0, B: 1}, {A: 1, B: 2}}, func(_ int, cfg *router.Config) {
		cfg.Durable = &router.DurableConfig{Pubends: map[string]string{"trades": "phb"}, Members: names}
	})
	if err != nil {
		return fmt.Errorf("durable demo: %w", err)
	}
	defer m.Stop()
	d := demoDurable{m: m, out: out, audit: &durableAudit{filter: match.MustParse(`price >= 100`), ct: client.CT{}}}
	fmt.Fprintf(out, "routers phb - mid - shb (QUIC on loopback, Pebble logs synced before every acknowledgement); pubend \"trades\" at phb\n")
	fmt.Fprintf(out, "durable subscriber \"audit\" at shb: %s\n\n", d.audit.filter)
	return d.run(ctx, events, opts.Events)
}

// demoDurable is one run of the durable demo.
type demoDurable struct {
	m     *local.Mesh
	out   io.Writer
	audit *durableAudit
	pub   *client.DurablePublisher
}

func (d *demoDurable) run(ctx context.Context, events []match.Event, n int) error {
	if err := d.connect(ctx); err != nil {
		return err
	}
	pub, err := client.NewDurablePublisher(ctx, client.DurablePublisherOptions{
		DurableOptions: d.options("demo-publisher", 0), Pubend: "trades", ID: "demo-publisher"})
	if err != nil {
		return fmt.Errorf("durable demo: publisher: %w", err)
	}
	defer pub.Close()
	d.pub = pub
	if err := d.phase(ctx, "1. connected", events[:n], events[:n]); err != nil {
		return err
	}
	d.audit.disconnect()
	fmt.Fprintf(d.out, "2. audit disconnects with CT %v\n", d.audit.checkpoint())
	if err := d.publish(ctx, events[n:2*n]); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "   %d events published and logged while audit is away (%d match its filter)\n", n, countMatching(d.audit.filter, events[n:2*n]))
	start := time.Now()
	if err := d.connect(ctx); err != nil {
		return err
	}
	if err := d.waitFor(ctx, events[:2*n]); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "3. audit reconnects with that CT and catches up in %v\n", time.Since(start).Round(time.Millisecond))
	if err := d.phase(ctx, "4. live again", events[2*n:], events); err != nil {
		return err
	}
	d.audit.disconnect()
	return d.check(events)
}

// options are the durable client options for a client of router i.
func (d *demoDurable) options(name string, i int) client.DurableOptions {
	env := d.m.Routers[i]
	return client.DurableOptions{Options: client.Options{TLS: env.ClientTLS, Name: name}, Routers: []string{env.Addr}}
}

// connect (re)subscribes audit at shb with its CT (none the first time)
// and consumes its messages until it disconnects.
func (d *demoDurable) connect(ctx context.Context) error {
	a := d.audit
	var ct client.CT
	if ct = a.checkpoint(); len(ct) == 0 {
		ct = nil
	}
	s, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{
		DurableOptions: d.options("audit", 2), ID: "audit", Filter: a.filter.String(), CT: ct})
	if err != nil {
		return fmt.Errorf("durable demo: subscribe: %w", err)
	}
	a.mu.Lock()
	a.sub, a.done = s, make(chan struct{})
	a.mu.Unlock()
	go a.consume(s, a.done)
	return nil
}

// consume records events and advances the CT; it acknowledges the CT
// after each message (the demo "stores" in memory).
func (a *durableAudit) consume(s *client.DurableSubscription, done chan struct{}) {
	defer close(done)
	for msg := range s.Messages() {
		a.mu.Lock()
		if msg.Kind == client.DurableEvent {
			a.got = append(a.got, msg.Event)
		}
		msg.Advance(a.ct)
		ct := a.ct.Clone()
		a.mu.Unlock()
		s.Ack(ct)
	}
}

func (a *durableAudit) disconnect() {
	a.mu.Lock()
	s, done := a.sub, a.done
	a.mu.Unlock()
	s.Close()
	<-done
}

func (a *durableAudit) checkpoint() client.CT {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ct.Clone()
}

func (a *durableAudit) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.got)
}

// phase publishes batch while audit is connected and waits until audit
// has every matching event of upto.
func (d *demoDurable) phase(ctx context.Context, title string, batch, upto []match.Event) error {
	start := time.Now()
	if err := d.publish(ctx, batch); err != nil {
		return err
	}
	if err := d.waitFor(ctx, upto); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "%s: %d events published durably, audit has %d matching events (%v)\n",
		title, len(batch), d.audit.count(), time.Since(start).Round(time.Millisecond))
	return nil
}

func (d *demoDurable) publish(ctx context.Context, batch []match.Event) error {
	for _, e := range batch {
		if _, err := d.pub.Publish(ctx, e); err != nil {
			return fmt.Errorf("durable demo: publish: %w", err)
		}
	}
	if err := d.pub.Flush(ctx); err != nil {
		return fmt.Errorf("durable demo: publish: %w", err)
	}
	return nil
}

// waitFor waits until audit holds as many events as upto has matching.
func (d *demoDurable) waitFor(ctx context.Context, upto []match.Event) error {
	want := countMatching(d.audit.filter, upto)
	for d.audit.count() < want {
		select {
		case <-ctx.Done():
			return fmt.Errorf("durable demo: audit has %d of %d matching events: %w", d.audit.count(), want, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
	return nil
}

// check compares what audit received with the matching events, in
// publish order (one publisher: tick order is publish order).
func (d *demoDurable) check(events []match.Event) error {
	var want []match.Event
	for _, e := range events {
		if d.audit.filter.Matches(e) {
			want = append(want, e)
		}
	}
	got := d.audit.got
	for i := range min(len(got), len(want)) {
		if !got[i].Equal(want[i]) {
			return fmt.Errorf("durable demo: delivery %d is %v, want %v", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("durable demo: audit received %d events, %d match", len(got), len(want))
	}
	fmt.Fprintf(d.out, "\naudit received exactly the %d matching events of all three batches, each once, in order: nothing lost while away, no duplicate\n", len(got))
	return nil
}

// numbered adds a sequence attribute to every event, so equal trades stay
// distinct.
func numbered(events []match.Event) []match.Event {
	out := make([]match.Event, len(events))
	for i, e := range events {
		attrs := make([]match.Attr, 0, e.Len()+1)
		for j := range e.Len() {
			attrs = append(attrs, e.At(j))
		}
		out[i] = match.MustEvent(append(attrs, match.Attr{Name: seqAttr, Value: match.Int(int64(i))})...)
	}
	return out
}

func countMatching(f match.Filter, events []match.Event) int {
	n := 0
	for _, e := range events {
		if f.Matches(e) {
			n++
		}
	}
	return n
}
