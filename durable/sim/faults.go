package sim

import (
	"math/rand/v2"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/memstore"
)

// scheduleFaults plans the discrete faults of the chaos phase: crashes,
// partitions, subscriber reconnections and publisher disconnections, each
// at random times before chaosEnd.
func (w *world) scheduleFaults(chaosEnd durable.Tick) {
	randTime := func() durable.Tick { return durable.Tick(w.rng.IntN(int(chaosEnd))) }
	if w.cfg.has(FaultCrash) {
		for range 1 + w.rng.IntN(3) {
			n := w.nodes[w.order[w.rng.IntN(len(w.order))]]
			w.at(randTime(), func() {
				if w.chaos {
					w.crash(n)
				}
			})
		}
	}
	if w.cfg.has(FaultPartition) {
		for range 1 + w.rng.IntN(3) {
			a := w.order[w.rng.IntN(len(w.order))]
			b := w.topo.linkOf(w, w.rng, a)
			d := durable.Tick(10_000 + w.rng.IntN(100_000))
			w.at(randTime(), func() {
				w.trace("partition %s|%s for %d", a, b, d)
				w.stats.Partitions++
				w.cuts[linkKey(a, b)] = w.now + d
			})
		}
	}
	if w.cfg.has(FaultReconnect) || w.cfg.has(FaultRoam) {
		for _, s := range w.subs {
			for range w.rng.IntN(4) {
				d := durable.Tick(2_000 + w.rng.IntN(80_000))
				w.at(randTime(), func() {
					if !w.chaos || !s.connected {
						return
					}
					w.stats.Reconnects++
					s.disconnect(w)
					w.at(w.now+d, func() {
						if !s.connected {
							s.connect(w)
						}
					})
				})
			}
		}
	}
	if w.cfg.has(FaultClock) {
		for _, name := range w.order {
			if n := w.nodes[name]; n.kind == kindPHB || n.kind == kindReplica {
				for range w.rng.IntN(3) {
					w.at(randTime(), func() {
						if w.chaos {
							w.stepClockBack(n)
						}
					})
				}
			}
		}
	}
	if w.cfg.has(FaultBlock) {
		// Its own source: the other faults' draws stay as they were.
		rng := rand.New(rand.NewPCG(w.cfg.Seed, 0xb10c))
		for range 1 + rng.IntN(3) {
			a := w.order[rng.IntN(len(w.order))]
			b := w.topo.linkOf(w, rng, a)
			at := durable.Tick(rng.IntN(int(chaosEnd)))
			d := durable.Tick(10_000 + rng.IntN(150_000))
			w.at(at, func() {
				w.trace("block %s|%s for %d", a, b, d)
				w.stats.Blocks++
				for _, key := range []string{a + ">" + b, b + ">" + a} {
					w.linkFree[key] = max(w.linkFree[key], w.now+d)
				}
			})
		}
	}
	if w.cfg.has(FaultWipe) {
		rng := rand.New(rand.NewPCG(w.cfg.Seed, 0x3129e))
		for range 1 + rng.IntN(2) {
			n := w.nodes[shbName(rng.IntN(w.cfg.SHBs))]
			at := durable.Tick(rng.IntN(int(chaosEnd)))
			w.at(at, func() {
				if w.chaos && n.up {
					w.wipe(n)
				}
			})
		}
	}
	if w.cfg.has(FaultFull) {
		rng := rand.New(rand.NewPCG(w.cfg.Seed, 0xf011))
		for range 1 + rng.IntN(3) {
			n := w.nodes[w.order[rng.IntN(len(w.order))]]
			at := durable.Tick(rng.IntN(int(chaosEnd)))
			d := durable.Tick(10_000 + rng.IntN(150_000))
			if n.kind != kindPHB && n.kind != kindSHB {
				continue // routers keep nothing on disk; replicas write through Raft
			}
			w.at(at, func() {
				w.trace("disk of %s full for %d", n.name, d)
				w.stats.FullDisks++
				n.fullUntil = max(n.fullUntil, w.now+d)
			})
		}
	}
	if w.cfg.has(FaultOutage) {
		rng := rand.New(rand.NewPCG(w.cfg.Seed, 0x0a7a9e))
		n := w.nodes[shbName(rng.IntN(w.cfg.SHBs))]
		at := durable.Tick(rng.IntN(int(chaosEnd / 5)))
		w.at(at, func() {
			if !w.chaos || !n.up {
				return
			}
			w.trace("outage of %s until the chaos ends", n.name)
			w.stats.Outages++
			w.takeDown(n)
			w.restartAfter(n, chaosEnd-w.now)
		})
	}
	if w.cfg.has(FaultJoin) {
		rng := rand.New(rand.NewPCG(w.cfg.Seed, 0x301e))
		n := w.nodes[shbName(rng.IntN(w.cfg.SHBs))]
		at := durable.Tick(rng.IntN(int(chaosEnd)))
		w.at(0, func() {
			// Not started yet: down from the first instant, with an empty
			// disk when it starts.
			w.trace("%s joins at %d", n.name, at)
			w.stats.Joins++
			w.takeDown(n)
			n.store = memstore.New()
			w.restartAfter(n, at)
		})
	}
	if w.cfg.has(FaultPublisher) {
		for _, p := range w.pubs {
			for range 1 + w.rng.IntN(2) {
				d := durable.Tick(2_000 + w.rng.IntN(50_000))
				w.at(randTime(), func() {
					if w.chaos {
						w.stats.PublisherCuts++
						p.disconnect(w, d)
					}
				})
			}
		}
	}
}
