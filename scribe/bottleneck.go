package scribe

// shed is the bottleneck remover. While the node holds more children entries
// than its cap, it takes the group with the most children, drops the child
// farthest from it by proximity, and sends that child its former siblings
// with the node's distance to each. A group with a single child is never
// shed from, since the child would have no sibling to go to.
func (n *Node) shed(now Time, out *Outbox) {
	for n.nchildren > n.cfg.MaxChildren {
		var g *group
		for _, h := range n.groups {
			if g == nil || len(h.children) > len(g.children) {
				g = h
			}
		}
		if g == nil || len(g.children) < 2 {
			return
		}
		far, farDist := 0, int64(-1)
		for i, c := range g.children {
			if d := n.distTo(c.Addr); d > farDist {
				far, farDist = i, d
			}
		}
		orphan := g.children[far]
		g.children = append(g.children[:far], g.children[far+1:]...)
		n.nchildren--
		sibs := append([]Ref(nil), g.children...)
		costs := make([]int64, len(sibs))
		for i, s := range sibs {
			costs[i] = n.distTo(s.Addr)
		}
		out.send(orphan.Addr, Message{Kind: KindRedirect, From: n.self, Key: g.key, Refs: sibs, Costs: costs})
	}
}

// onRedirect moves this node under the former sibling that minimises the
// delay from the old parent through that sibling to this node.
func (n *Node) onRedirect(now Time, m *Message, out *Outbox) {
	g := n.group(m.Key)
	if g == nil || g.parent.Addr != m.From.Addr {
		return
	}
	best, bestCost := -1, int64(0)
	for i, s := range m.Refs {
		if s.Addr == n.self.Addr || n.isDead(s.Addr) {
			continue
		}
		if c := m.Costs[i] + n.distTo(s.Addr); best < 0 || c < bestCost {
			best, bestCost = i, c
		}
	}
	if best < 0 {
		g.parent = None
		n.sendJoin(now, g, out)
		return
	}
	g.parent = m.Refs[best]
	g.heard = now
	out.send(g.parent.Addr, Message{Kind: KindJoinDirect, From: n.self, Origin: n.self, Key: g.key})
}
