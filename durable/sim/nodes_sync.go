package sim

import "github.com/sift-pubsub/sift/durable"

// Sync latency of a simulated disk, in microseconds.
const (
	syncBase   = 100
	syncJitter = 400
)

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
	if b == nil {
		for _, env := range msgs {
			w.send(env)
		}
		return
	}
	if err := n.store.Apply(&b.Writes, false); err != nil {
		w.violate("%s: apply: %v", n.name, err)
		return
	}
	inc := n.incarnation
	w.at(w.now+durable.Tick(syncBase+w.rng.IntN(syncJitter)), func() {
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
