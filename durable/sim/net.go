package sim

import (
	"fmt"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
)

// Link latencies, in microseconds.
const (
	baseLatency   = 500
	jitterLatency = 1500
)

// send schedules the delivery of env. Broker and publisher links are lossy
// datagram-like links subject to the enabled faults; a subscriber's link is
// a FIFO connection that only loses what is in flight when it is cut.
func (w *world) send(env durable.Envelope) {
	if err := wireNames(env.Msg); err != "" {
		w.violate("%s -> %s: %v: %s (a real link would refuse it)", env.From, env.To, env.Msg.Kind, err)
		return
	}
	if n, ok := w.nodes[env.From]; (ok && n.kind == kindPHB) || w.groups[env.From] != nil {
		w.oracle.announced(w, env.Msg)
	}
	if w.isSubscriber(env.From) || w.isSubscriber(env.To) {
		w.sendFIFO(env)
		return
	}
	if w.chaos && w.partitioned(env.From, env.To) {
		w.stats.Dropped++
		return
	}
	if w.chaos && w.cfg.has(FaultDrop) && w.rng.Float64() < 0.05 {
		w.stats.Dropped++
		return
	}
	copies := 1
	if w.chaos && w.cfg.has(FaultDup) && w.rng.Float64() < 0.04 {
		copies = 2
		w.stats.Duplicated++
	}
	sendAt := w.now
	if w.cfg.LinkCost > 0 {
		// The link transmits one message per LinkCost: a burst queues.
		key := env.From + ">" + env.To
		sendAt = max(w.now, w.linkFree[key]) + w.cfg.LinkCost
		w.linkFree[key] = sendAt
	}
	for range copies {
		w.q.add(&item{at: sendAt + w.latency(), env: &env})
	}
}

// latency draws a link latency with the enabled faults.
func (w *world) latency() durable.Tick {
	d := durable.Tick(baseLatency)
	if w.chaos && w.cfg.has(FaultReorder) {
		d += durable.Tick(w.rng.IntN(jitterLatency * 4))
	} else {
		d += durable.Tick(w.rng.IntN(jitterLatency))
	}
	if w.chaos && w.cfg.has(FaultDelay) && w.rng.Float64() < 0.02 {
		d += durable.Tick(20_000 + w.rng.IntN(80_000))
	}
	if w.cfg.has(FaultSlow) {
		d *= slowLink
	}
	return d
}

// sendFIFO delivers in order on a subscriber connection: never before the
// previous message of the same direction.
func (w *world) sendFIFO(env durable.Envelope) {
	key := env.From + ">" + env.To
	at := max(w.now+baseLatency+durable.Tick(w.rng.IntN(jitterLatency)), w.fifoLast[key]+1)
	w.fifoLast[key] = at
	w.q.add(&item{at: at, env: &env})
}

// partitioned reports whether the link between a and b is cut.
func (w *world) partitioned(a, b string) bool {
	until, ok := w.cuts[linkKey(a, b)]
	return ok && w.now < until
}

func linkKey(a, b string) string {
	if a > b {
		a, b = b, a
	}
	return a + "|" + b
}

// wireNames checks the names a message carries against the wire's limit
// (wire.MaxNameLen), which the simulator does not encode through.
func wireNames(m durable.Msg) string {
	long := func(what, s string) string {
		if len(s) > wire.MaxNameLen {
			return fmt.Sprintf("%s: %d bytes (want at most %d)", what, len(s), wire.MaxNameLen)
		}
		return ""
	}
	if e := long("sub", m.Sub); e != "" {
		return e
	}
	for _, s := range m.Subs {
		if e := long("filter set sub", s.Sub); e != "" {
			return e
		}
	}
	return ""
}
