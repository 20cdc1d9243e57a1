package scribe

// Tick tells the node the time. Every HeartbeatInterval, a parent that sent
// nothing else to its children sends them a heartbeat carrying its path from
// the root. A child that has not heard from its parent for HeartbeatTimeout
// marks the parent dead, which makes it rejoin through Pastry (see
// [Node.MarkDead]). Tick does nothing when heartbeats are disabled.
func (n *Node) Tick(now Time, out *Outbox) {
	if n.cfg.HeartbeatInterval == 0 {
		return
	}
	var suspects []Addr
	for _, g := range n.groups {
		if len(g.children) > 0 && now-g.sent >= n.cfg.HeartbeatInterval {
			n.sendChildren(now, g, KindHeartbeat, out)
		}
		if !g.root && g.parent.Valid() && now-g.heard > n.cfg.HeartbeatTimeout {
			suspects = append(suspects, g.parent.Addr)
		}
	}
	for _, a := range suspects {
		n.MarkDead(now, a, out)
	}
}

// onHeartbeat refreshes the parent's liveness and this node's path from the
// root. Heartbeats from a node that is not the parent are ignored.
func (n *Node) onHeartbeat(now Time, m *Message, out *Outbox) {
	g := n.group(m.Key)
	if g == nil || m.From.Addr != g.parent.Addr {
		return
	}
	g.heard = now
	if !n.setPath(g, m.Path) {
		n.breakLoop(now, g, out)
	}
}

// breakLoop leaves a parent whose path from the root holds this node, and
// rejoins through Pastry.
func (n *Node) breakLoop(now Time, g *group, out *Outbox) {
	out.send(g.parent.Addr, Message{Kind: KindLeave, From: n.self, Key: g.key})
	g.parent = None
	g.path = nil
	n.sendJoin(now, g, out)
}
