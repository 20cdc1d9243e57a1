package replica

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/memstore"
	"github.com/sift-pubsub/sift/match"
)

// cluster drives replicas of one pubend in one goroutine: a Ready's
// writes are applied and synced at once, then its messages delivered in
// order (peer messages to the other replicas unless cut, pubend messages
// collected).
type cluster struct {
	t     *testing.T
	names []string
	reps  map[string]*Replica
	store map[string]*memstore.Store
	down  map[string]bool
	cut   map[string]bool // a replica cut off from the others
	now   durable.Tick
	rng   *rand.Rand
	inbox []PeerMsg
	out   []durable.Envelope // pubend messages sent by the leaders
	// applied: per replica, the data of each index it applied.
	applied map[string]map[uint64]string
	maxPeer int // the largest peer message delivered, in bytes
	pad     string
	manual  string // a replica whose Readies the test takes itself (drain skips it)
	prefer  string // Config.Preferred of the replicas booted
}

func pubendConfig() durable.PubendConfig {
	return durable.PubendConfig{ID: "p", Node: "phb", Downstream: []string{"r1"}, SHBs: []string{"shb"}}
}

func newCluster(t *testing.T, n int, seed uint64) *cluster {
	return newClusterPreferring(t, n, seed, "")
}

// newClusterPreferring starts a cluster whose replicas prefer the named
// one as leader (Config.Preferred; "" none).
func newClusterPreferring(t *testing.T, n int, seed uint64, prefer string) *cluster {
	c := &cluster{t: t, reps: map[string]*Replica{}, store: map[string]*memstore.Store{},
		down: map[string]bool{}, cut: map[string]bool{}, rng: rand.New(rand.NewPCG(seed, 1)),
		applied: map[string]map[uint64]string{}, prefer: prefer}
	for i := range n {
		c.names = append(c.names, fmt.Sprintf("r%d", i+1))
	}
	for _, name := range c.names {
		c.store[name] = memstore.New()
		c.boot(name, false)
	}
	return c
}

func (c *cluster) boot(name string, join bool) {
	cfg := Config{Pubend: pubendConfig(), Name: name, Replicas: c.names, Join: join, Preferred: c.prefer,
		Rand: rand.New(rand.NewPCG(c.rng.Uint64(), 2))}
	r, err := New(cfg, c.store[name])
	if err != nil {
		c.t.Fatalf("boot %s: %v", name, err)
	}
	c.reps[name] = r
	c.down[name] = false
	if c.applied[name] == nil {
		c.applied[name] = map[uint64]string{}
	}
}

// crash takes a replica down, losing what it had not synced (nothing, in
// this driver: it syncs each Ready at once).
func (c *cluster) crash(name string) {
	c.down[name] = true
	c.store[name].Crash(c.rng)
}

// wipe restarts a replica with an empty store; it joins under a fresh id.
func (c *cluster) wipe(name string) {
	c.store[name] = memstore.New()
	c.applied[name] = map[uint64]string{}
	c.boot(name, true)
}

// run advances time by d in raft ticks, draining every replica's Readies.
func (c *cluster) run(d durable.Tick) {
	end := c.now + d
	for c.now < end {
		c.now += 1_000
		for _, name := range c.names {
			if !c.down[name] {
				if err := c.reps[name].Tick(c.now); err != nil {
					c.t.Fatalf("%s: tick: %v", name, err)
				}
			}
		}
		c.drain()
	}
}

func (c *cluster) drain() {
	for range 1000 {
		busy := false
		for _, name := range c.names {
			if c.down[name] || name == c.manual {
				continue
			}
			r := c.reps[name]
			rd := r.Ready()
			if rd.Empty() {
				continue
			}
			busy = true
			if err := c.store[name].Apply(rd.Writes, rd.Sync); err != nil {
				c.t.Fatal(err)
			}
			c.store[name].Sync()
			for _, a := range rd.Applied {
				c.checkApplied(name, a)
			}
			c.inbox = append(c.inbox, rd.PeerNow...)
			c.inbox = append(c.inbox, rd.Peer...)
			c.out = append(c.out, rd.Msgs...)
			r.Advance()
		}
		inbox := c.inbox
		c.inbox = nil
		for _, m := range inbox {
			busy = true
			c.maxPeer = max(c.maxPeer, len(m.Data))
			if c.down[m.To] || c.cut[m.To] || c.cut[m.From] {
				continue
			}
			if err := c.reps[m.To].StepPeer(c.now, m.Data); err != nil {
				c.t.Fatalf("%s: step peer: %v", m.To, err)
			}
		}
		if !busy {
			return
		}
	}
	c.t.Fatal("cluster does not quiesce")
}

// checkApplied checks that every replica applies the same entry at each
// index (raft's safety, as this package uses it).
func (c *cluster) checkApplied(name string, a Applied) {
	data := fmt.Sprintf("%d/%x", a.Term, a.Data)
	c.applied[name][a.Index] = data
	for other, m := range c.applied {
		if got, ok := m[a.Index]; ok && got != data {
			c.t.Fatalf("index %d: %s applied %s, %s applied %s", a.Index, name, data, other, got)
		}
	}
}

func (c *cluster) leader() string {
	for _, name := range c.names {
		if !c.down[name] && c.reps[name].Leading() {
			return name
		}
	}
	return ""
}

func (c *cluster) waitLeader() string {
	for range 200 {
		if l := c.leader(); l != "" {
			return l
		}
		c.run(10_000)
	}
	c.t.Fatal("no leader")
	return ""
}

// publish sends event seq of publisher pub to the current leader.
func (c *cluster) publish(pub string, seq uint64) {
	l := c.leader()
	if l == "" {
		return
	}
	attrs := []match.Attr{{Name: "n", Value: match.Int(int64(seq))}}
	if c.pad != "" {
		attrs = append(attrs, match.Attr{Name: "pad", Value: match.Str(c.pad)})
	}
	ev := match.MustEvent(attrs...)
	if err := c.reps[l].Step(c.now, durable.Envelope{From: pub, To: "phb",
		Msg: durable.Msg{Kind: durable.MsgPublish, Pubend: "p", Publisher: pub, Seq: seq, Event: ev}}); err != nil {
		c.t.Fatal(err)
	}
}

// acks returns the acknowledgements sent so far, by sequence.
func (c *cluster) acks() map[uint64]durable.Tick {
	out := map[uint64]durable.Tick{}
	for _, env := range c.out {
		if env.Msg.Kind == durable.MsgPubAck && env.Msg.Tick != 0 {
			if old, ok := out[env.Msg.Seq]; ok && old != env.Msg.Tick {
				panic(fmt.Sprintf("seq %d acknowledged at ticks %d and %d", env.Msg.Seq, old, env.Msg.Tick))
			}
			out[env.Msg.Seq] = env.Msg.Tick
		}
	}
	return out
}

// logged reads the event log of a replica's committed state: tick -> seq.
func (c *cluster) logged(name string) map[durable.Tick]uint64 {
	out := map[durable.Tick]uint64{}
	st := prefixStore{base: c.store[name], pre: prefix("p", tableState)}
	pre := durable.PHBLogPrefix("p")
	if err := st.Scan(pre, prefixEnd(pre), func(k, v []byte) bool {
		_, seq, _, err := durable.DecodeLogRecord(v)
		if err != nil {
			c.t.Fatal(err)
		}
		out[durable.Tick(beUint64(k[len(pre):]))] = seq
		return true
	}); err != nil {
		c.t.Fatal(err)
	}
	return out
}

func TestReplicatedPublishAckedOnlyOnceCommitted(t *testing.T) {
	c := newCluster(t, 3, 1)
	l := c.waitLeader()
	// Cut the leader off: what it is sent is logged by nobody else, so
	// it must not acknowledge it.
	c.cut[l] = true
	c.publish("pub", 1)
	c.run(5_000)
	if len(c.acks()) != 0 {
		t.Fatalf("acknowledged without a majority: %v", c.acks())
	}
	c.cut[l] = false
	c.run(20_000)
	if l2 := c.waitLeader(); l2 == l {
		if _, ok := c.acks()[1]; !ok {
			t.Fatalf("leader %s kept its lead but never acknowledged", l)
		}
	}
}

func TestReplicatedPubendSurvivesLeaderCrash(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c := newCluster(t, 3, seed)
			acked := uint64(0)
			crashed := ""
			for step := 0; step < 1000 && acked < 60; step++ {
				if c.leader() == "" {
					c.run(10_000)
					continue
				}
				if acked >= 20 && crashed == "" {
					crashed = c.leader()
					c.crash(crashed)
				}
				if acked >= 40 && c.down[crashed] {
					c.boot(crashed, false) // back from its crash
				}
				// Resend from the first unacknowledged sequence (the
				// publisher's idempotent resend).
				for next := acked + 1; next <= acked+4; next++ {
					c.publish("pub", next)
				}
				c.run(2_000)
				for a := c.acks(); a[acked+1] != 0; acked++ {
				}
			}
			if acked < 60 {
				t.Fatalf("only %d acknowledged", acked)
			}
			c.run(200_000)
			acks := c.acks()
			for _, name := range c.names {
				if c.down[name] {
					continue
				}
				logged := c.logged(name)
				seen := map[uint64]durable.Tick{}
				for tick, seq := range logged {
					if old, ok := seen[seq]; ok {
						t.Fatalf("%s: seq %d logged twice, at %d and %d", name, seq, old, tick)
					}
					seen[seq] = tick
				}
				for seq, tick := range acks {
					if seen[seq] != tick {
						t.Fatalf("%s: seq %d acknowledged at tick %d, logged at %d", name, seq, tick, seen[seq])
					}
				}
			}
			if crashed == "" {
				t.Fatal("the leader was never crashed")
			}
			checkAnnouncements(t, c.out)
			// One publisher: its events take increasing ticks, across
			// the leader change too (no tick assigned twice).
			for seq := uint64(2); seq <= acked; seq++ {
				if acks[seq] <= acks[seq-1] {
					t.Fatalf("seq %d at tick %d, not above seq %d at %d", seq, acks[seq], seq-1, acks[seq-1])
				}
			}
			if c.reps[c.leader()].Stats.Activations == 0 {
				t.Fatal("no activation")
			}
		})
	}
}

// checkAnnouncements checks that no tick is announced twice with other
// content across leaders: a data tick is never inside an announced
// silence, and never carries two events.
func checkAnnouncements(t *testing.T, out []durable.Envelope) {
	t.Helper()
	data := map[durable.Tick]string{}
	var silences []durable.Range
	for _, env := range out {
		switch env.Msg.Kind {
		case durable.MsgData:
			s := fmt.Sprint(env.Msg.Event)
			if old, ok := data[env.Msg.Tick]; ok && old != s {
				t.Fatalf("tick %d announced with %s and %s", env.Msg.Tick, old, s)
			}
			data[env.Msg.Tick] = s
		case durable.MsgSilence:
			silences = append(silences, durable.Range{From: env.Msg.From, To: env.Msg.To})
		}
	}
	for tick := range data {
		for _, r := range silences {
			if r.Contains(tick) {
				t.Fatalf("tick %d announced as data and inside silence %v", tick, r)
			}
		}
	}
}

func TestWipedReplicaRejoinsUnderFreshID(t *testing.T) {
	c := newCluster(t, 3, 7)
	l := c.waitLeader()
	for seq := uint64(1); seq <= 20; seq++ {
		c.publish("pub", seq)
		c.run(2_000)
	}
	var victim string
	for _, name := range c.names {
		if name != l {
			victim = name
			break
		}
	}
	oldID := c.reps[victim].ID()
	c.crash(victim)
	c.wipe(victim)
	c.run(300_000)
	if id := c.reps[victim].ID(); id == oldID {
		t.Fatalf("wiped replica came back under its old id %x", id)
	}
	voters := c.reps[c.waitLeader()].Voters()
	slices.Sort(voters)
	if !slices.Equal(voters, c.names) {
		t.Fatalf("voters %v, want %v", voters, c.names)
	}
	if got := len(c.logged(victim)); got != 20 {
		t.Fatalf("the rejoined replica holds %d events, want 20", got)
	}
	// It now counts toward a majority: with the old leader down, the two
	// others (one of them the rejoined replica) elect a leader and go on.
	c.crash(c.waitLeader())
	c.publish("pub", 21)
	c.run(300_000)
	c.publish("pub", 21)
	c.run(50_000)
	if _, ok := c.acks()[21]; !ok {
		t.Fatalf("no acknowledgement after the leader crash with the rejoined replica as one of two")
	}
}

// TestCutOffLeaderStopsServing: a leader cut off from both others stops
// being the PHB within two quorum periods (three election timeouts each,
// quorum.go) while the others
// elect a leader of their own; once the cut heals exactly one replica
// leads. A leader with one follower down keeps a majority and keeps
// leading.
func TestCutOffLeaderStopsServing(t *testing.T) {
	const timeout = 10 * 10_000 // ElectionTicks × TickPeriod (the defaults)
	for seed := range uint64(4) {
		c := newCluster(t, 3, seed+10)
		l := c.waitLeader()
		others := slices.DeleteFunc(slices.Clone(c.names), func(n string) bool { return n == l })
		c.crash(others[0])
		c.run(3 * timeout)
		if !c.reps[l].Leading() || c.reps[l].Stats.QuorumLost != 0 {
			t.Fatalf("seed %d: %s stopped leading with one follower of two up (quorum lost %d times)", seed, l, c.reps[l].Stats.QuorumLost)
		}
		c.boot(others[0], false)
		c.run(timeout)
		c.cut[l] = true
		c.run(2*3*timeout + 10_000)
		if c.reps[l].Leading() {
			t.Fatalf("seed %d: %s, cut off, still the PHB two quorum periods later", seed, l)
		}
		if c.reps[l].Stats.QuorumLost == 0 {
			t.Fatalf("seed %d: %s stopped leading, but not by the quorum check", seed, l)
		}
		var leading []string
		for range 20 {
			leading = nil
			for _, n := range others {
				if c.reps[n].Leading() {
					leading = append(leading, n)
				}
			}
			if len(leading) == 1 {
				break
			}
			c.run(timeout)
		}
		if len(leading) != 1 {
			t.Fatalf("seed %d: with %s cut off, %v lead", seed, l, leading)
		}
		c.cut[l] = false
		c.run(3 * timeout)
		n := 0
		for _, name := range c.names {
			if c.reps[name].Leading() {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("seed %d: after the cut healed %d replicas lead", seed, n)
		}
	}
}

// addReplica makes name a replica of the test cluster (its store empty);
// it is booted only with boot.
func (c *cluster) addReplica(name string) {
	c.names = append(c.names, name)
	c.store[name] = memstore.New()
	c.down[name] = true
}

func (c *cluster) voters(name string) []string {
	v := c.reps[name].Voters()
	slices.Sort(v)
	return v
}

// TestMembershipChanges: an operator adds a replica, replaces one by
// another and removes one, each a joint-consensus change at the leader;
// the cluster keeps acknowledging across them, the replaced and removed
// replicas stay out although they keep asking to join, and every refused
// change (not the leader, unknown or existing names, a change under way)
// says why and changes nothing. Then the leader itself is replaced and
// removed: it hands leadership over first.
func TestMembershipChanges(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { testMembershipChanges(t, seed) })
	}
}

func testMembershipChanges(t *testing.T, seed uint64) {
	const timeout = 10 * 10_000
	c := newCluster(t, 3, seed+20)
	l := c.waitLeader()
	var follower string
	for _, n := range c.names {
		if n != l {
			follower = n
			break
		}
	}
	seq := uint64(0)
	publish := func(k int) {
		for range k {
			seq++
			c.publish("pub", seq)
			c.run(2_000)
		}
		c.run(timeout)
		for s := uint64(1); s <= seq; s++ {
			if _, ok := c.acks()[s]; !ok {
				// Resend what a leader change dropped (the publisher's
				// idempotent resend).
				c.publish("pub", s)
			}
		}
		c.run(timeout)
	}
	publish(20)

	// Refusals change nothing.
	var nl *NotLeaderError
	if err := c.reps[follower].ChangeMembers(MemberChange{Op: MemberAdd, Name: "r4"}); !errors.As(err, &nl) || nl.Leader != l {
		t.Fatalf("a change at follower %s: %v, want a NotLeaderError naming %s", follower, err, l)
	}
	for _, tc := range []struct {
		ch   MemberChange
		want string
	}{
		{MemberChange{Op: MemberRemove, Name: "r9"}, `unknown replica "r9" (replicas: r1, r2, r3)`},
		{MemberChange{Op: MemberAdd, Name: follower}, "is already a replica"},
		{MemberChange{Op: MemberReplace, Name: follower, With: l}, "is already a replica"},
		{MemberChange{Op: MemberAdd, Name: ""}, "a replica name of 1-"},
		{MemberChange{Op: "grow", Name: "r4"}, "unknown membership change"},
	} {
		err := c.reps[l].ChangeMembers(tc.ch)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%+v: %v, want an error containing %q", tc.ch, err, tc.want)
		}
	}
	if got := c.reps[l].Roster(); !slices.Equal(got, []string{"r1", "r2", "r3"}) || c.reps[l].Stats.MemberChanges != 0 {
		t.Fatalf("refused changes changed the roster: %v (%d changes)", got, c.reps[l].Stats.MemberChanges)
	}

	// Add r4: proposed at the leader, r4 joins.
	if err := c.reps[l].ChangeMembers(MemberChange{Op: MemberAdd, Name: "r4"}); err != nil {
		t.Fatal(err)
	}
	if err := c.reps[l].ChangeMembers(MemberChange{Op: MemberAdd, Name: "r5"}); !errors.Is(err, ErrChangePending) {
		t.Fatalf("a second change at once: %v, want ErrChangePending", err)
	}
	c.addReplica("r4")
	c.run(timeout)
	c.boot("r4", true)
	c.run(5 * timeout)
	l = c.waitLeader()
	if !c.reps["r4"].Voter() || !slices.Equal(c.voters(l), []string{"r1", "r2", "r3", "r4"}) {
		t.Fatalf("after add r4: r4 voter %v, voters %v", c.reps["r4"].Voter(), c.voters(l))
	}
	publish(20)

	// Replace a follower by r5.
	old := ""
	for _, n := range []string{"r1", "r2", "r3"} {
		if n != l {
			old = n
			break
		}
	}
	if err := c.reps[l].ChangeMembers(MemberChange{Op: MemberReplace, Name: old, With: "r5"}); err != nil {
		t.Fatal(err)
	}
	c.addReplica("r5")
	c.run(timeout)
	c.boot("r5", true)
	c.run(8 * timeout)
	l = c.waitLeader()
	want := slices.Sorted(slices.Values(slices.DeleteFunc([]string{"r1", "r2", "r3", "r4", "r5"}, func(n string) bool { return n == old })))
	if got := c.voters(l); !slices.Equal(got, want) || c.reps[old].Voter() && c.reps[old].Leading() {
		t.Fatalf("after replace %s by r5: voters %v, want %v", old, got, want)
	}
	publish(20)

	// Remove r4, or, if it leads, another follower.
	gone := "r4"
	if l == gone {
		gone = want[0]
	}
	if err := c.reps[l].ChangeMembers(MemberChange{Op: MemberRemove, Name: gone}); err != nil {
		t.Fatal(err)
	}
	c.run(8 * timeout)
	l = c.waitLeader()
	want = slices.DeleteFunc(want, func(n string) bool { return n == gone })
	if got := c.voters(l); !slices.Equal(got, want) {
		t.Fatalf("after remove %s: voters %v, want %v", gone, got, want)
	}
	publish(20)
	// The replaced and the removed replica keep running and asking to
	// join: they stay out.
	c.run(10 * timeout)
	if got := c.voters(l); !slices.Equal(got, want) {
		t.Fatalf("%s and %s got back in: voters %v", old, gone, got)
	}
	for s := uint64(1); s <= seq; s++ {
		if _, ok := c.acks()[s]; !ok {
			t.Fatalf("seq %d never acknowledged", s)
		}
	}
	if got := c.reps[l].Roster(); !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Fatalf("roster %v, want %v", got, want)
	}

	// Replace the leader itself by r6: r6 catches up as a learner, the
	// leader hands over, and the next leader promotes r6 and removes it.
	was := l
	if err := c.reps[l].ChangeMembers(MemberChange{Op: MemberReplace, Name: l, With: "r6"}); err != nil {
		t.Fatal(err)
	}
	c.addReplica("r6")
	c.run(timeout)
	c.boot("r6", true)
	c.run(10 * timeout)
	l = c.waitLeader()
	want = slices.Sorted(slices.Values(append(slices.DeleteFunc(want, func(n string) bool { return n == was }), "r6")))
	if got := c.voters(l); l == was || !slices.Equal(got, want) {
		t.Fatalf("after replace of the leader %s by r6: leader %s, voters %v, want %v", was, l, got, want)
	}
	if c.reps[was].Stats.Transfers == 0 {
		t.Fatalf("the replaced leader %s never transferred leadership", was)
	}
	publish(20)

	// Remove the leader.
	was = l
	if err := c.reps[l].ChangeMembers(MemberChange{Op: MemberRemove, Name: l}); err != nil {
		t.Fatal(err)
	}
	c.run(10 * timeout)
	l = c.waitLeader()
	want = slices.DeleteFunc(want, func(n string) bool { return n == was })
	if got := c.voters(l); l == was || !slices.Equal(got, want) {
		t.Fatalf("after removing the leader %s: leader %s, voters %v, want %v", was, l, got, want)
	}
	publish(20)
	c.run(10 * timeout)
	if got := c.voters(l); !slices.Equal(got, want) || c.leader() != l {
		t.Fatalf("after the removed leader %s kept running: leader %s, voters %v, want %v", was, c.leader(), got, want)
	}
	for s := uint64(1); s <= seq; s++ {
		if _, ok := c.acks()[s]; !ok {
			t.Fatalf("seq %d never acknowledged", s)
		}
	}
}

// TestLearnerDoesNotVote: an added replica is a learner until it caught
// up, so it does not count toward a majority meanwhile. With the learner
// cut off and one of the three voters down, the two voters left still
// commit (as a voter, the learner would have made the majority 3 of 4);
// once the cut heals, the learner catches up and becomes a voter.
func TestLearnerDoesNotVote(t *testing.T) {
	const timeout = 10 * 10_000
	for seed := range uint64(4) {
		c := newCluster(t, 3, seed+40)
		l := c.waitLeader()
		for seq := uint64(1); seq <= 10; seq++ {
			c.publish("pub", seq)
			c.run(2_000)
		}
		if err := c.reps[l].ChangeMembers(MemberChange{Op: MemberAdd, Name: "r4"}); err != nil {
			t.Fatal(err)
		}
		c.addReplica("r4")
		c.run(timeout)
		c.cut["r4"] = true // the join request is not heard yet
		c.boot("r4", true)
		c.run(timeout)
		c.cut["r4"] = false
		for range 100 {
			if slices.Contains(c.reps[l].Learners(), "r4") {
				break
			}
			c.run(1_000)
		}
		if !slices.Equal(c.reps[l].Learners(), []string{"r4"}) || slices.Contains(c.voters(l), "r4") {
			t.Fatalf("seed %d: r4 joined: learners %v, voters %v; want r4 a learner first", seed, c.reps[l].Learners(), c.voters(l))
		}
		c.cut["r4"] = true
		var follower string
		for _, n := range c.names[:3] {
			if n != l {
				follower = n
				break
			}
		}
		c.crash(follower)
		for seq := uint64(11); seq <= 20; seq++ {
			c.publish("pub", seq)
			c.run(2_000)
		}
		c.run(timeout)
		for seq := uint64(11); seq <= 20; seq++ {
			if _, ok := c.acks()[seq]; !ok {
				t.Fatalf("seed %d: seq %d not acknowledged by two of three voters with the learner cut off", seed, seq)
			}
		}
		if got := c.voters(l); slices.Contains(got, "r4") {
			t.Fatalf("seed %d: the cut-off learner became a voter: %v", seed, got)
		}
		c.cut["r4"] = false
		c.boot(follower, false)
		c.run(5 * timeout)
		l = c.waitLeader()
		if got := c.voters(l); !slices.Equal(got, []string{"r1", "r2", "r3", "r4"}) || len(c.reps[l].Learners()) != 0 {
			t.Fatalf("seed %d: after the cut healed: voters %v, learners %v", seed, got, c.reps[l].Learners())
		}
		if got := len(c.logged("r4")); got != 20 {
			t.Fatalf("seed %d: r4 holds %d events, want 20", seed, got)
		}
	}
}

// TestSnapshotInChunks: a wiped replica catches up from a snapshot of
// more than 16 MiB (the largest frame a router link takes), sent as
// chunks of at most MaxChunk (256 KiB) each: every peer message
// delivered is within a chunk and its header, and the rejoined replica
// holds every event.
func TestSnapshotInChunks(t *testing.T) {
	c := newCluster(t, 3, 9)
	c.pad = strings.Repeat("x", 16<<10)
	l := c.waitLeader()
	const n = 1100 // 1,100 events of 16 KiB: more than 16 MiB, none released
	for seq := uint64(1); seq <= n; seq++ {
		c.publish("pub", seq)
		if seq%10 == 0 {
			c.run(2_000)
		}
	}
	c.run(50_000)
	if got := len(c.acks()); got != n {
		t.Fatalf("%d of %d acknowledged before the wipe", got, n)
	}
	var victim string
	for _, name := range c.names {
		if name != l {
			victim = name
			break
		}
	}
	c.crash(victim)
	c.wipe(victim)
	c.maxPeer = 0
	c.run(500_000)
	if got := len(c.logged(victim)); got != n {
		t.Fatalf("the rejoined replica holds %d events, want %d", got, n)
	}
	chunked := 0
	for _, name := range c.names {
		chunked += c.reps[name].Stats.Chunked
	}
	if chunked == 0 || c.reps[victim].Stats.Snapshots == 0 {
		t.Fatalf("no snapshot in chunks (chunked %d, snapshots applied %d)", chunked, c.reps[victim].Stats.Snapshots)
	}
	if limit := 256<<10 + 1024; c.maxPeer > limit {
		t.Fatalf("a peer message of %d bytes, above a chunk (%d)", c.maxPeer, limit)
	}
}
