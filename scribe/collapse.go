package scribe

// Collapse removes this node from every tree where it is a forwarder with no
// interest in the group and a single child: its parent adopts the child in
// its place, and the child is told its new parent. Callers run it on one
// node at a time and let the messages settle before the next, since two
// adjacent forwarders collapsing at once could each hand their child to the
// other.
func (n *Node) Collapse(now Time, out *Outbox) {
	for _, g := range append([]*group(nil), n.groups...) {
		if g.member || g.root || len(g.children) != 1 || !g.parent.Valid() {
			continue
		}
		child := g.children[0]
		out.send(g.parent.Addr, Message{Kind: KindCollapse, From: n.self, Key: g.key, Refs: []Ref{child}})
		out.send(child.Addr, Message{Kind: KindNewParent, From: n.self, Key: g.key, Refs: []Ref{g.parent}})
		n.dropGroup(g)
	}
}

func (n *Node) onCollapse(now Time, m *Message, out *Outbox) {
	g := n.group(m.Key)
	if g == nil {
		return
	}
	if g.removeChild(m.From.Addr) {
		n.nchildren--
	}
	n.addChild(now, g, m.Refs[0], out)
}

func (n *Node) onNewParent(now Time, m *Message) {
	if g := n.group(m.Key); g != nil && g.parent.Addr == m.From.Addr {
		g.parent = m.Refs[0]
		g.heard = now
	}
}
