package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/replica"
)

// FaultMembers (replicated pubends): an operator changes one group's
// replicas while events are published, at whichever replica leads then:
// either the leader is replaced by a new replica, or a new replica is
// added and then the leader (whichever leads then) removed, so that the
// group never has fewer voters than it started with (two of three left,
// one of them wiped, would be no majority). The new
// replica starts empty and joins (a learner until it caught up, then a
// voter); the leader hands leadership over before its own id goes. The
// replica taken out keeps running and asking to join, in vain. At the
// end, the group's voters must be exactly its replicas still in it, with
// no learner left, each caught up (replicaLagging).

// memberRetry is how often a refused change (no leader yet, a change
// under way) is tried again.
const memberRetry = 20_000

// scheduleMemberChanges plans FaultMembers, from its own random source.
func (w *world) scheduleMemberChanges(chaosEnd durable.Tick) {
	if w.cfg.Replicas <= 1 || !w.cfg.has(FaultMembers) {
		return
	}
	rng := rand.New(rand.NewPCG(w.cfg.Seed, 0x3e3b))
	phbs := slices.Sorted(mapKeys(w.groups))
	g := w.groups[phbs[rng.IntN(len(phbs))]]
	replace := rng.IntN(2) == 0
	at := durable.Tick(rng.IntN(int(chaosEnd) / 2))
	w.at(at, func() {
		newName := replicaName(g.phb, len(g.replicas))
		if replace {
			w.changeMembers(g, func(leader string) replica.MemberChange {
				return replica.MemberChange{Op: replica.MemberReplace, Name: leader, With: newName}
			}, func() { w.addReplica(g, newName) })
			return
		}
		w.changeMembers(g, func(string) replica.MemberChange {
			return replica.MemberChange{Op: replica.MemberAdd, Name: newName}
		}, func() {
			w.addReplica(g, newName)
			w.changeMembers(g, func(leader string) replica.MemberChange {
				return replica.MemberChange{Op: replica.MemberRemove, Name: leader}
			}, func() {})
		})
	})
}

// changeMembers asks the group's leader for the change made by change
// (given the leader's name), again every memberRetry until one takes it;
// the replica it takes out is retired at once, and then runs once the
// change is applied.
func (w *world) changeMembers(g *group, change func(leader string) replica.MemberChange, then func()) {
	for _, name := range g.replicas {
		n := w.nodes[name]
		if !n.up || n.replica == nil || !n.replica.Leading() || n.retired {
			continue
		}
		c := change(name)
		if err := n.replica.ChangeMembers(c); err != nil {
			break
		}
		w.trace("%s: %s %s %s", name, c.Op, c.Name, c.With)
		w.stats.MemberChanges++
		if c.Op != replica.MemberAdd {
			w.nodes[c.Name].retired = true
		}
		w.flush(n)
		w.at(w.now+memberRetry, func() { w.whenRoster(g, c, then) })
		return
	}
	w.at(w.now+memberRetry, func() { w.changeMembers(g, change, then) })
}

// whenRoster runs then once a leader of the group has the change's
// roster applied. A leader that serves without it (the proposal was lost
// with an earlier leader: a serving leader applied every earlier entry)
// is asked again, as an operator would.
func (w *world) whenRoster(g *group, c replica.MemberChange, then func()) {
	for _, name := range g.replicas {
		n := w.nodes[name]
		if !n.up || n.replica == nil || !n.replica.Leading() {
			continue
		}
		ro := n.replica.Roster()
		in := c.With
		if c.Op == replica.MemberAdd {
			in = c.Name
		}
		if (in == "" || slices.Contains(ro, in)) && (c.Op == replica.MemberAdd || !slices.Contains(ro, c.Name)) {
			then()
			return
		}
		if n.replica.ChangeMembers(c) == nil {
			w.trace("%s: %s %s %s again", name, c.Op, c.Name, c.With)
			w.flush(n)
		}
	}
	w.at(w.now+memberRetry, func() { w.whenRoster(g, c, then) })
}

// addReplica starts a new replica of the group, empty: it joins.
func (w *world) addReplica(g *group, name string) {
	w.trace("start new replica %s", name)
	g.replicas = append(g.replicas, name)
	w.addNode(name, kindReplica)
	n := w.nodes[name]
	n.group, n.wiped = g, true
	if err := w.boot(n); err != nil {
		w.violate("%v", err)
	}
}

// membersLagging describes how a group's membership has not settled (""
// when it has): its leader's voters are the group's replicas not
// retired, with no learner.
func (w *world) membersLagging(g *group) string {
	var want []string
	for _, name := range g.replicas {
		if !w.nodes[name].retired {
			want = append(want, name)
		}
	}
	for _, name := range want {
		n := w.nodes[name]
		if !n.up || n.replica == nil || !n.replica.Leading() {
			continue
		}
		voters := slices.Sorted(slices.Values(n.replica.Voters()))
		if !slices.Equal(voters, want) || len(n.replica.Learners()) > 0 {
			return fmt.Sprintf("%s: voters %v, learners %v; want voters %v", g.pubend, voters, n.replica.Learners(), want)
		}
		return ""
	}
	return g.pubend + ": no replica leads"
}
