package scribe

// Leave ends this node's membership of group key. If it has no children
// left it sends LEAVE to its parent, which prunes itself in turn when it is
// left with no children and no interest of its own.
func (n *Node) Leave(now Time, key ID, out *Outbox) {
	if g := n.group(key); g != nil {
		g.member = false
		n.prune(g, out)
	}
}

func (n *Node) onLeave(m *Message, out *Outbox) {
	if g := n.group(m.Key); g != nil && g.removeChild(m.From.Addr) {
		n.nchildren--
		n.prune(g, out)
	}
}

// prune removes g from this node if the node is neither root nor member and
// has no children, telling its parent.
func (n *Node) prune(g *group, out *Outbox) {
	if g.member || g.root || len(g.children) > 0 {
		return
	}
	if g.parent.Valid() {
		out.send(g.parent.Addr, Message{Kind: KindLeave, From: n.self, Key: g.key})
	}
	n.dropGroup(g)
}
