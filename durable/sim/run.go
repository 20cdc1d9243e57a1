package sim

import (
	"bytes"
	"fmt"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
)

// Violation is one broken promise found in a run.
type Violation struct {
	Seed uint64
	Time durable.Tick
	What string
}

// Stats counts what happened in a run.
type Stats struct {
	Published      int          `json:"published"`
	Delivered      int          `json:"delivered"`
	Gaps           int          `json:"gaps"`
	Dropped        int          `json:"dropped"`
	Duplicated     int          `json:"duplicated"`
	Crashes        int          `json:"crashes"`
	Partitions     int          `json:"partitions"`
	Blocks         int          `json:"blocks"`         // links blocked (FaultBlock)
	Wipes          int          `json:"wipes"`          // SHBs (FaultWipe) and PHB replicas (Config.Replicas) restarted with an empty disk
	FullDisks      int          `json:"full_disks"`     // disks filled for a while (FaultFull)
	Outages        int          `json:"outages"`        // SHBs down for most of the chaos phase (FaultOutage)
	Joins          int          `json:"joins"`          // SHBs started partway through it (FaultJoin)
	MemberChanges  int          `json:"member_changes"` // replicated pubends' membership changes (FaultMembers)
	Reconnects     int          `json:"reconnects"`
	ClockSteps     int          `json:"clock_steps"` // PHB clocks set back
	Roams          int          `json:"roams"`       // reconnections at another SHB
	ClaimDrops     int          `json:"claim_drops"` // registrations left behind, dropped on a claim
	PublisherCuts  int          `json:"publisher_cuts"`
	NacksFromBelow int          `json:"nacks_from_below"` // nack ranges the router received
	NacksUpstream  int          `json:"nacks_upstream"`   // nack ranges the router sent up
	CatchupNacks   int          `json:"catchup_nacks"`
	RemoteNacks    int          `json:"remote_nacks"` // nack ranges for roaming subscribers' missed events
	Overflows      int          `json:"overflows"`    // up-to-date sessions moved to catch-up by a full queue
	PFSRecords     int          `json:"pfs_records"`
	SHBDrops       int          `json:"shb_drops"`      // SHBs dropped by a PHB for being absent too long
	StaleIgnored   int          `json:"stale_ignored"`  // filtered silences SHBs ignored by their stamps
	LeaderChanges  int          `json:"leader_changes"` // replicas that became their pubend's PHB (Config.Replicas)
	Snapshots      int          `json:"snapshots"`      // snapshots replicas restored
	EarlyApplies   int          `json:"early_applies"`  // replicas' applies during a sync (replica.ReadyInFlight)
	Pipelined      int          `json:"pipelined"`      // leaders' proposals during their sync (replica.Stats.Pipelined)
	Preferred      int          `json:"preferred"`      // leaderships handed to a preferred replica (replica.Config.Preferred, three seeds in four)
	EndTime        durable.Tick `json:"end_time_us"`
}

// Result is the outcome of one run.
type Result struct {
	Seed       uint64
	Violations []Violation
	Stats      Stats
}

// maxSteps bounds the work of one run, so that a broken protocol that
// floods the network fails instead of running on.
const maxSteps = 20_000_000

// maxPending bounds the messages and timers pending at once: a protocol
// that multiplies messages (each one causing several) fails fast instead
// of running into maxSteps at ever slower steps.
const maxPending = 100_000

// Run simulates one seed. It stops at the first violation.
func Run(cfg Config) Result {
	cfg.populate()
	res := Result{Seed: cfg.Seed}
	w, err := newWorld(cfg, &res)
	if err != nil {
		res.Violations = append(res.Violations, Violation{Seed: cfg.Seed, What: err.Error()})
		return res
	}
	chaosEnd := durable.Tick(50_000 + 5_000*cfg.Events)
	w.chaos = true
	w.populate(chaosEnd)
	w.scheduleFaults(chaosEnd)
	w.scheduleReplicaFaults(chaosEnd)
	w.scheduleMemberChanges(chaosEnd)
	w.at(chaosEnd, func() { w.heal() })
	deadline := chaosEnd + cfg.HealTime
	steps := 0
	for w.q.Len() > 0 && !w.done && len(res.Violations) == 0 {
		it := w.q.next()
		if it.at > deadline {
			break
		}
		if steps++; steps > maxSteps {
			w.violate("runaway: more than %d simulation steps", maxSteps)
			break
		}
		if w.q.Len() > maxPending {
			w.violate("flood: more than %d messages and timers pending", maxPending)
			break
		}
		w.now = it.at
		if it.env != nil {
			w.dispatch(*it.env)
		} else {
			it.fn()
		}
	}
	if !w.done && len(res.Violations) == 0 {
		w.violate("liveness: not caught up %d us after the faults stopped: %s", cfg.HealTime, w.lagging())
	}
	w.finalChecks()
	w.collectStats()
	return res
}

// populate creates publishers with their events and subscribers with their
// filters, and schedules publishing and first connections.
func (w *world) populate(chaosEnd durable.Tick) {
	for i := range w.cfg.Publishers {
		pi := w.rng.IntN(w.cfg.Pubends)
		p := &publisher{id: fmt.Sprintf("pub%d", i+1), phb: phbName(pi), pubend: pubendName(pi)}
		w.pubs = append(w.pubs, p)
		w.pubByID[p.id] = p
		w.at(1_000, func() { p.send(w, durable.Msg{Kind: durable.MsgHello}) })
		w.everyPeriod(p.id, 10_000, func() { p.timer(w) })
	}
	for n := range w.cfg.Events {
		p := w.pubs[w.rng.IntN(len(w.pubs))]
		p.events = append(p.events, randomEvent(w, p.id, len(p.events)+1))
		w.stats.Published++
		at := 10_000 + durable.Tick(w.rng.IntN(int(chaosEnd-30_000)))
		_ = n
		w.at(at, func() { p.available++; p.pump(w) })
	}
	filters := subscriptionFilters()
	for i := range w.cfg.Subscribers {
		s := &subscriber{id: fmt.Sprintf("s%d", i+1), shb: shbName(i % w.cfg.SHBs),
			filter: filters[w.rng.IntN(len(filters))]}
		w.subs = append(w.subs, s)
		w.subByID[s.id] = s
		w.at(durable.Tick(w.rng.IntN(int(chaosEnd/2))), func() {
			if !s.connected {
				s.connect(w)
			}
		})
		w.everyPeriod(s.id, subAckPeriod, func() { s.timer(w) })
	}
}

// everyPeriod runs fn every period until the run ends.
func (w *world) everyPeriod(_ string, period durable.Tick, fn func()) {
	var tick func()
	tick = func() {
		fn()
		w.at(w.now+period, tick)
	}
	w.at(w.now+period, tick)
}

func randomEvent(w *world, pub string, seq int) match.Event {
	syms := []string{"IBM", "SUN", "HP"}
	return match.MustEvent(
		match.Attr{Name: "k", Value: match.Int(int64(w.rng.IntN(8)))},
		match.Attr{Name: "sym", Value: match.Str(syms[w.rng.IntN(len(syms))])},
		match.Attr{Name: "src", Value: match.Str(pub)},
		match.Attr{Name: "n", Value: match.Int(int64(seq))},
	)
}

func subscriptionFilters() []match.Filter {
	var fs []match.Filter
	for _, text := range []string{`*`, `k < 4`, `k == 2`, `sym == "IBM"`, `sym == "SUN" && k >= 3`, `k > 100`} {
		f, err := match.Parse(text)
		if err != nil {
			panic(err)
		}
		fs = append(fs, f)
	}
	return fs
}

// heal stops injecting faults; everything down comes back, everyone
// reconnects, and the run continues until all have caught up.
func (w *world) heal() {
	w.chaos = false
	w.trace("heal")
	for _, s := range w.subs {
		if !s.connected {
			s.connect(w)
		}
	}
	w.everyPeriod("liveness", 10_000, func() {
		if w.lagging() == "" {
			w.done = true
		}
	})
}

// lagging describes what has not caught up yet ("" when all has).
func (w *world) lagging() string {
	for _, p := range w.pubs {
		if !p.done() {
			return fmt.Sprintf("publisher %s has %d of %d events acknowledged", p.id, p.acked, len(p.events))
		}
	}
	for _, s := range w.subs {
		if !s.live {
			return fmt.Sprintf("subscriber %s is not connected", s.id)
		}
		for _, p := range w.pubendNames() {
			if s.ct[p] < w.oracle.lastTick(p) {
				return fmt.Sprintf("subscriber %s is at %d on %s, the last event is at %d", s.id, s.ct[p], p, w.oracle.lastTick(p))
			}
		}
	}
	for _, name := range w.order {
		n := w.nodes[name]
		if !n.up {
			return fmt.Sprintf("%s is down", name)
		}
		switch n.kind {
		case kindPHB:
			if k := n.store.Keys(durable.PHBLogPrefix(n.pubend.ID())); len(k) > 0 {
				return fmt.Sprintf("%s still logs %d events (L prefix %d)", name, len(k), n.pubend.Lost())
			}
		case kindReplica:
			if s := w.replicaLagging(n); s != "" {
				return s
			}
		case kindSHB:
			for _, p := range w.pubendNames() {
				if k := n.store.Keys(durable.PFSRecordPrefix(p)); len(k) > 0 {
					return fmt.Sprintf("%s still holds %d PFS records of %s", name, len(k), p)
				}
			}
		}
	}
	return ""
}

// finalChecks verifies that only PHBs store events.
func (w *world) finalChecks() {
	for _, name := range w.order {
		n := w.nodes[name]
		if n.kind == kindPHB || n.kind == kindReplica {
			continue
		}
		for _, role := range durable.EventKeyRoles {
			if k := n.store.Keys([]byte{role}); len(k) > 0 {
				w.violate("%s stores event log keys: %x", name, bytes.Join(k, []byte(",")))
			}
		}
	}
}

func (w *world) collectStats() {
	for _, name := range w.order {
		n := w.nodes[name]
		switch {
		case n.replica != nil:
			w.stats.Snapshots += n.replica.Stats.Snapshots
			w.stats.Preferred += n.replica.Stats.Preferred
		case n.pubend != nil:
			w.stats.SHBDrops += n.pubend.Stats.SHBDrops
		case n.router != nil:
			w.stats.NacksFromBelow += n.router.Stats.NacksFromBelow
			w.stats.NacksUpstream += n.router.Stats.NacksUpstream
		case n.shb != nil:
			w.stats.CatchupNacks += n.shb.Stats.CatchupNack
			w.stats.Overflows += n.shb.Stats.Overflows
			w.stats.PFSRecords += n.shb.Stats.PFSRecords
			w.stats.StaleIgnored += n.shb.Stats.StaleIgnored
			w.stats.RemoteNacks += n.shb.Stats.RemoteNacks
			w.stats.ClaimDrops += n.shb.Stats.ClaimDrops
		}
	}
	w.stats.EndTime = w.now
	w.res.Stats = w.stats
}
