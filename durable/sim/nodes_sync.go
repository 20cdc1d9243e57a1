package sim

import (
	"errors"

	"github.com/sift-pubsub/sift/durable"
)

// Sync latency of a simulated disk, in microseconds.
const (
	syncBase   = 100
	syncJitter = 400
)

// With FaultSlow, syncs take slowSync times as long, broker links
// slowLink times as long (15-60 ms: a round trip is always longer than a
// router's NackTimeout) and routers cache slowCacheRuns runs.
const (
	slowSync      = 200
	slowLink      = 30
	slowCacheRuns = 16
)

// syncLatency draws the time one sync takes.
func (w *world) syncLatency() durable.Tick {
	d := durable.Tick(syncBase + w.rng.IntN(syncJitter))
	if w.cfg.has(FaultSlow) {
		d *= slowSync
	}
	return d
}

// flush carries out a node's Ready through durable.Host, the group commit
// the router's driver uses too: take the Ready, apply its writes, and sync
// them; while the sync runs the node keeps taking input (which accumulates
// in the machine), and its messages leave only when the sync completes. A
// Ready without writes is sent at once. A crash during the sync loses the
// batch (or, by the store's crash model, keeps it) and its messages are
// never sent.
func (w *world) flush(n *node) {
	if !n.up {
		return
	}
	if n.kind == kindReplica {
		w.flushReplica(n)
		return
	}
	b, msgs := n.host.Take()
	for _, env := range msgs {
		w.send(env) // all of them without writes, else the early ones
	}
	if b == nil {
		return
	}
	if w.now < n.fullUntil {
		n.host.Fail(false, errFull)
		w.retryFull(n, n.incarnation)
		return
	}
	if err := n.store.Apply(&b.Writes, false); err != nil {
		w.violate("%s: apply: %v", n.name, err)
		return
	}
	w.syncBatch(n, b)
}

// errFull is the simulated store's refusal while its disk is full.
var errFull = errors.New("no space left on device (simulated)")

// fullRetry is how often a driver retries a batch its full store refused.
const fullRetry = 20_000

// retryFull retries the failed batch of a node every fullRetry, as the
// router's driver does (durable.Host.Retry): while the disk is full it
// fails again; then it is applied and synced like any batch.
func (w *world) retryFull(n *node, inc uint64) {
	w.at(w.now+fullRetry, func() {
		if !n.up || n.incarnation != inc {
			return
		}
		b, applied := n.host.Retry()
		if b == nil {
			return
		}
		if w.now < n.fullUntil {
			n.host.Fail(applied, errFull)
			w.retryFull(n, inc)
			return
		}
		if !applied {
			if err := n.store.Apply(&b.Writes, false); err != nil {
				w.violate("%s: apply: %v", n.name, err)
				return
			}
			n.host.Applied()
		}
		w.syncBatch(n, b)
	})
}

// syncBatch syncs an applied batch after the disk's latency and sends its
// messages (unless the node crashed meanwhile).
func (w *world) syncBatch(n *node, b *durable.HostBatch) {
	inc := n.incarnation
	w.at(w.now+w.syncLatency(), func() {
		if !n.up || n.incarnation != inc {
			return // crashed during the sync
		}
		if w.chaos && w.cfg.has(FaultCrash) && w.rng.Float64() < 0.01 {
			w.crash(n)
			return
		}
		n.store.Sync()
		w.observeDurable(n, &b.Writes)
		for _, env := range n.host.Synced() {
			w.send(env)
		}
		w.flush(n)
	})
}
