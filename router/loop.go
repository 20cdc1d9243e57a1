package router

import (
	"context"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/core"
)

// loopMsg is one input to the matching loop: a typed input of router/core
// with what only the shell knows of it, or a query of the shell's state.
// Readers of every connection send them on one channel, so the loop sees
// each publisher's batches in the order they arrived. The loop's only
// other input is its timer on the core's deadline (run).
type loopMsg struct {
	in core.Input // nil: a query; in.From is the connection it came from
	// conn (with core.Attach and core.LinkUp) is the connection the loop
	// registers once the core takes it.
	conn    *conn
	linkErr chan<- error // with core.LinkUp: the verdict
	at      time.Time    // with core.Publish, core.BloomPublish: when the frame was read
	// wantVer (with core.Publish) is the version of the wanted names the
	// batch was decoded with; 0: in full (wanted.go).
	wantVer uint64
	query   func(*matchLoop) // runs inside the loop: HTTP and stats reads
}

// matchLoop owns the engine (and so the index) and the map of attached
// connections. It never blocks on a socket: outputs go to bounded send
// queues, and a connection whose queue is full is closed as a slow
// consumer.
type matchLoop struct {
	eng     *core.Engine
	conns   map[ifaceID]*conn
	metrics *Metrics
	staged  []*conn // connections with deliveries staged in this step
	links           // nil mesh: no router links
	// want is the set of attribute names the readers decode (wanted.go);
	// redec decodes again the batches decoded under an older set.
	want  wantedNames
	redec wire.EventDecoder
	timer coreTimer // on the core's deadline (coreloop.go)
	// at is when the batch whose Ready the loop carries out was read,
	// stamped on its deliveries (latency measurements).
	at time.Time
}

// run processes inputs until in is closed, and ticks the core when the
// timer on its deadline fires.
func (l *matchLoop) run(in <-chan loopMsg) {
	l.startWanted()
	defer l.timer.stop()
	for {
		select {
		case m, ok := <-in:
			if !ok {
				return
			}
			l.step(m)
		case <-l.timer.fired():
			l.tickCore()
			l.flush()
		}
	}
}

// step carries out one input: the shell's part of it (registering or
// forgetting a connection, the wanted names of a batch) around the core's.
func (l *matchLoop) step(m loopMsg) {
	defer l.flush()
	switch in := m.in.(type) {
	case nil:
		m.query(l)
	case core.Publish:
		l.publish(in, m)
	case core.BloomPublish:
		l.publishBloom(in, m.at)
	case core.Attach:
		if err := l.stepCore(in); err != nil {
			m.conn.fail(wire.CodeInternal, err.Error())
			return
		}
		l.conns[in.Conn] = m.conn
	case core.LinkUp:
		l.linkUp(in, m.conn, m.linkErr)
	case core.Detach:
		l.detach(in.Conn)
	default:
		if _, ok := l.conns[in.From()]; ok {
			l.stepCore(in) // the core answers (or refuses) it through Ready
		}
	}
}

// detach forgets a connection that went away: in the loop's own state,
// then in the core's (the engine, the mesh).
func (l *matchLoop) detach(id ifaceID) {
	if _, ok := l.conns[id]; !ok {
		return
	}
	l.dropConn(id)
	l.stepCore(core.Detach{Conn: id})
}

// dropConn forgets a connection in the loop's own state: the connections,
// the Bloom counters.
func (l *matchLoop) dropConn(id ifaceID) {
	delete(l.conns, id)
	if l.bloom != nil {
		delete(l.bloom, id)
	}
}

// reply acknowledges a subscribe or unsubscribe, or sends its error frame
// (a non-fatal error changes nothing and keeps the connection up).
func (l *matchLoop) reply(id ifaceID, about wire.Type, sub uint64, err error) {
	c, ok := l.conns[id]
	if !ok {
		return // detached while the request was queued
	}
	var frame []byte
	switch code := wire.CodeOf(err); {
	case err == nil:
		frame = wire.AppendFrame(nil, &wire.Ack{About: about, ID: sub})
		l.metrics.Subscriptions.Set(float64(l.eng.Subscriptions()))
	case code.Fatal():
		c.fail(code, err.Error())
		l.detach(id)
		return
	default:
		c.log.Info("request refused", "type", about, "id", sub, "code", code, "err", err)
		l.metrics.Errors.WithLabelValues(code.String()).Inc()
		frame = wire.AppendFrame(nil, &wire.Error{Code: code, About: about, Ref: sub, Msg: err.(*wire.ProtocolError).Msg})
	}
	l.pushControl(c, frame)
}

// publish hands a batch to the core, which routes it: to local clients
// by the engine, to links by the link table (never back to the link it
// came from); a client's batch is acknowledged after its deliveries.
func (l *matchLoop) publish(in core.Publish, m loopMsg) {
	if l.want.stale(m.wantVer) { // before anything reads the events (wanted.go)
		if err := l.want.refresh(&l.redec, in.Pub); err != nil {
			panic("router: a validated batch no longer decodes: " + err.Error())
		}
	}
	l.stepEvents(m.in, in.Conn, len(in.Pub.Events), m.at) // m.in: boxed once, by the reader
}

// stepEvents steps a batch of events read at at from connection from
// (no tick: the event path arms no deadline), carries out its Ready and
// counts the batch on the link it came on.
func (l *matchLoop) stepEvents(in core.Input, from ifaceID, events int, at time.Time) {
	l.at = at
	if err := l.core.Step(in); err != nil {
		panic("router: the core refused a batch the loop built: " + err.Error())
	}
	l.carryCore()
	if c, ok := l.conns[from]; ok && c.linkIn != nil {
		c.linkIn.Add(float64(events))
	}
}

func (l *matchLoop) pushControl(c *conn, frame []byte) {
	if !c.q.pushControl(frame) {
		l.slowConsumer(c)
	}
}

func (l *matchLoop) slowConsumer(c *conn) {
	l.metrics.SlowConsumers.Inc()
	l.metrics.Errors.WithLabelValues(wire.CodeSlowConsumer.String()).Inc()
	c.fail(wire.CodeSlowConsumer, "slow consumer: the connection's send queue is full; it was disconnected so that publishers and other subscribers keep going")
	l.detach(c.id)
}

// send hands a message to the loop, or gives up when ctx ends or the
// router stops taking input.
func (r *Router) send(ctx context.Context, m loopMsg) bool {
	r.inMu.RLock()
	defer r.inMu.RUnlock()
	if r.inClosed {
		return false
	}
	select {
	case r.in <- m:
		return true
	case <-ctx.Done():
		return false
	case <-r.stopInput:
		return false
	}
}

// sendDetach tells the loop a connection is gone; it never blocks once
// input has stopped (the loop then forgets every connection anyway).
func (r *Router) sendDetach(id ifaceID) {
	r.send(context.Background(), loopMsg{in: core.Detach{Conn: id}})
}
