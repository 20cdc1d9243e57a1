package sim

import (
	"github.com/sift-pubsub/sift/scribe"
)

// treeMeasure is what one multicast from a group's root shows of its tree.
type treeMeasure struct {
	root         scribe.Addr
	nodes        int   // tree nodes: the root and every node the message reached
	edges        int   // multicast messages sent, one per tree edge
	rootChildren int   // copies the root sent
	mostChildren int   // most copies sent by one node
	delivered    int   // deliveries to members
	duplicates   int   // members that got the message more than once
	treeDelay    int64 // sum of the delays of all tree edges
	unicastDelay int64 // sum of the delays from the root straight to each member
	// memberDelay and directDelay give, per member other than the root, the
	// delay through the tree and straight from the root.
	memberDelay []int64
	directDelay []int64
}

// measureTree multicasts one message from key's root and observes it.
// onEdge, if set, sees every tree edge (parent, child).
func measureTree(s *Sim, key scribe.ID, members []scribe.Addr, onEdge func(from, to scribe.Addr)) treeMeasure {
	root := s.ClosestLive(key)
	tm := treeMeasure{root: root, nodes: 1}
	sent := map[scribe.Addr]int{}
	got := map[scribe.Addr]scribe.Time{}
	start := s.Now()
	s.OnSend = func(from, to scribe.Addr, m *scribe.Message) {
		if m.Kind != scribe.KindMulticast || m.Key != key {
			return
		}
		tm.edges++
		tm.nodes++
		sent[from]++
		tm.treeDelay += s.Net.Distance(from, to)
		if onEdge != nil {
			onEdge(from, to)
		}
	}
	s.OnDeliver = func(at scribe.Addr, d scribe.Delivery, now scribe.Time) {
		if d.Group != key {
			return
		}
		if _, dup := got[at]; dup {
			tm.duplicates++
		}
		got[at] = now - start
		tm.delivered++
	}
	s.Do(root, func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Publish(now, key, out) })
	s.Run()
	s.OnSend, s.OnDeliver = nil, nil
	tm.rootChildren = sent[root]
	for _, c := range sent {
		tm.mostChildren = max(tm.mostChildren, c)
	}
	for _, m := range members {
		if m == root {
			continue
		}
		d := s.Net.Distance(root, m)
		tm.unicastDelay += d
		tm.memberDelay = append(tm.memberDelay, int64(got[m]))
		tm.directDelay = append(tm.directDelay, d)
	}
	return tm
}
