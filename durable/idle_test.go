package durable

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// idleRouter is one router's durable machines as siftd wires them (a
// local pubend, the intermediate broker, the SHB, one store and one group
// commit through Host), driven deterministically: every tickEvery the
// timers fire, then messages are stepped and Readies taken until nothing
// is left; a batch is synced at once.
type idleRouter struct {
	t      *testing.T
	now    Tick
	store  *mapStore
	host   *Host
	pubend *Pubend
	router *Router
	shb    *SHB
	queue  []Envelope
	syncs  int // batches synced by the host
	// pubendWrites counts the pubend's own Readies with writes: what a
	// replicated pubend proposes (one raft entry, synced on every replica,
	// per Ready with writes).
	pubendWrites int
	toClient     []Envelope
}

// countingBroker counts the Readies of a broker that carry writes.
type countingBroker struct {
	Broker
	n *int
}

func (c countingBroker) Ready() Ready {
	rd := c.Broker.Ready()
	if !rd.Writes.Empty() {
		*c.n++
	}
	return rd
}

// Deferred passes on the wrapped broker's held-back writes.
func (c countingBroker) Deferred() *Batch {
	if d, ok := c.Broker.(Deferrer); ok {
		return d.Deferred()
	}
	return nil
}

const (
	idlePubendNode = "r1r1/pubend"
	idleSHBNode    = "r1/shb"
)

func newIdleRouter(t *testing.T) *idleRouter {
	r := &idleRouter{t: t, now: 1_000_000, store: newMapStore()}
	r.boot()
	return r
}

// boot (re)creates the machines from the store, as siftd does at start.
func (r *idleRouter) boot() {
	var err error
	r.pubend, err = NewPubend(PubendConfig{ID: "r1", Node: idlePubendNode, Downstream: []string{"r1"},
		LearnSHBs: true, SHBs: []string{idleSHBNode}}, r.store)
	if err != nil {
		r.t.Fatal(err)
	}
	r.router, err = NewRouter(RouterConfig{Node: "r1", Upstream: map[string]string{"r1": idlePubendNode},
		Downstream: []string{idleSHBNode}, Incarnation: uint64(r.now), NackTimeout: 100_000})
	if err != nil {
		r.t.Fatal(err)
	}
	r.shb, err = NewSHB(SHBConfig{Node: idleSHBNode, Upstream: "r1", Pubends: []string{"r1"},
		NackRetry: 200_000, ReportInterval: 100_000}, r.store)
	if err != nil {
		r.t.Fatal(err)
	}
	r.host = NewHost(countingBroker{r.pubend, &r.pubendWrites}, r.router, r.shb)
}

// run advances the clock by d in timer periods of 5 ms (the router's).
func (r *idleRouter) run(d Tick) {
	for end := r.now + d; r.now < end; r.now += 5_000 {
		for _, b := range []Broker{r.pubend, r.router, r.shb} {
			if err := b.Tick(r.now); err != nil {
				r.t.Fatal(err)
			}
		}
		r.settle()
	}
}

// settle steps every queued message and takes Readies until none is left.
func (r *idleRouter) settle() {
	for range 1000 {
		for len(r.queue) > 0 {
			env := r.queue[0]
			r.queue = r.queue[1:]
			r.step(env)
		}
		b, msgs := r.host.Take()
		if b != nil {
			if err := r.store.Apply(&b.Writes, true); err != nil {
				r.t.Fatal(err)
			}
			r.syncs++
			msgs = r.host.Synced()
		}
		if len(msgs) == 0 && b == nil {
			return
		}
		r.queue = append(r.queue, msgs...)
	}
	r.t.Fatal("the machines did not settle")
}

func (r *idleRouter) step(env Envelope) {
	if env.Msg.Kind == MsgRelease && env.From == idleSHBNode {
		r.checkReport(env.Msg)
	}
	var err error
	switch env.To {
	case idlePubendNode:
		err = r.pubend.Step(r.now, env)
	case "r1":
		err = r.router.Step(r.now, env)
	case idleSHBNode:
		err = r.shb.Step(r.now, env)
	default:
		r.toClient = append(r.toClient, env)
		r.ackClient(env)
	}
	if err != nil {
		r.t.Fatalf("%v: %v", env, err)
	}
}

// TestIdleRouterSyncs ticks the machines of one idle router, with no
// client, for 10 simulated seconds after a warm-up, and counts the
// batches synced: the pubend's lease and everything its silences move
// (the SHB's LD, its reports at the pubend, the release of silent ticks)
// share about one sync per second, while release still follows the clock.
func TestIdleRouterSyncs(t *testing.T) {
	r := newIdleRouter(t)
	r.run(3_000_000)
	syncs, own := r.syncs, r.pubendWrites
	r.run(10_000_000)
	syncs, own = r.syncs-syncs, r.pubendWrites-own
	t.Logf("10 s idle: %d syncs, %d pubend Readies with writes; lost %d µs behind the clock", syncs, own, r.now-r.pubend.Lost())
	if syncs > 12 || own > 12 {
		t.Errorf("idle router synced %d batches (pubend alone %d) in 10 s, want at most 12", syncs, own)
	}
	if behind := r.now - r.pubend.Lost(); behind > 4_000_000 {
		t.Errorf("release %d µs behind the clock after 13 s idle, want at most 4 s", behind)
	}
	if behind := r.now - r.shb.LD("r1"); behind > 1_000_000 {
		t.Errorf("LD %d µs behind the clock, want at most 1 s", behind)
	}
}

// checkReport checks rule SHB 7 against the store: a report leaving the
// SHB carries no Tr or Td above the LD on disk.
func (r *idleRouter) checkReport(m Msg) {
	meta, err := getTicks(r.store.Get, shbMetaKey("r1"), 5)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, rep := range m.Reports {
		if rep.Tr > meta[0] || rep.Td > meta[0] {
			r.t.Fatalf("report %+v above the LD on disk %d", rep, meta[0])
		}
	}
}

// TestIdleRouterCrash restarts an idle router from its store, which lacks
// the progress held back: LD, the pubend's reports and its release over
// silence go back to what was written, and come back by themselves; no
// report ever exceeded the LD on disk (checkReport).
func TestIdleRouterCrash(t *testing.T) {
	r := newIdleRouter(t)
	back := 0 // restarts that found held progress missing
	for round := range 5 {
		r.run(2_500_000 + Tick(round)*130_000) // crash at several phases of the lease
		lost, ld := r.pubend.Lost(), r.shb.LD("r1")
		if lost == 0 {
			t.Fatalf("round %d: nothing released after 2.5 s idle", round)
		}
		r.boot()
		if r.pubend.Lost() < lost || r.shb.LD("r1") < ld {
			back++
		}
		if r.pubend.Lost() > lost || r.shb.LD("r1") > ld {
			t.Fatalf("round %d: restart came back ahead: lost %d (was %d), LD %d (was %d)",
				round, r.pubend.Lost(), lost, r.shb.LD("r1"), ld)
		}
		r.run(3_000_000)
		if r.pubend.Lost() <= lost || r.shb.LD("r1") <= ld {
			t.Fatalf("round %d: no progress 3 s after the restart: lost %d (was %d), LD %d (was %d)",
				round, r.pubend.Lost(), lost, r.shb.LD("r1"), ld)
		}
	}
	if back == 0 {
		t.Fatal("no restart lost held progress: nothing was held back")
	}
}

// ackClient makes the subscriber "c1" acknowledge every position it is
// given, as the client library does.
func (r *idleRouter) ackClient(env Envelope) {
	m := env.Msg
	if env.To != "c1" || (m.Kind != MsgSubSilence && m.Kind != MsgEvent) {
		return
	}
	r.queue = append(r.queue, Envelope{From: "c1", To: idleSHBNode,
		Msg: Msg{Kind: MsgAck, Sub: m.Sub, Session: m.Session, CT: CT{m.Pubend: m.Tick}}})
}

// TestIdleRouterSubscriberSyncs: with one durable subscriber connected
// and acknowledging, an idle router still syncs about once per second:
// its idle silences carry the LD written, so they come once per lease
// renewal, and the acknowledgements they draw ride in the next one
// (holdAck).
func TestIdleRouterSubscriberSyncs(t *testing.T) {
	r := newIdleRouter(t)
	f, err := match.Parse("k > 1")
	if err != nil {
		t.Fatal(err)
	}
	r.queue = append(r.queue, Envelope{From: "c1", To: idleSHBNode,
		Msg: Msg{Kind: MsgResume, Sub: "s1", Session: 1, Filter: f}})
	r.run(3_000_000)
	syncs, own, msgs := r.syncs, r.pubendWrites, len(r.toClient)
	r.run(10_000_000)
	syncs, own, msgs = r.syncs-syncs, r.pubendWrites-own, len(r.toClient)-msgs
	t.Logf("10 s idle with a subscriber: %d syncs, %d pubend Readies with writes, %d messages to it", syncs, own, msgs)
	if msgs == 0 {
		t.Fatal("the subscriber heard nothing: its CT does not move")
	}
	if syncs > 12 || own > 12 {
		t.Errorf("idle router with a subscriber synced %d batches (pubend alone %d) in 10 s, want at most 12", syncs, own)
	}
}
