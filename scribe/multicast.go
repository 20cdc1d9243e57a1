package scribe

// Publish sends one message to every member of group key. The root
// multicasts it down the tree. Any other node sends it to the root: directly
// if it has the root's address cached, otherwise through Pastry, after which
// the root tells it its address.
func (n *Node) Publish(now Time, key ID, out *Outbox) {
	if g := n.group(key); g != nil && g.root {
		n.multicast(now, g, out)
		return
	}
	m := Message{Kind: KindPublish, From: n.self, Origin: n.self, Key: key}
	if r, ok := n.cachedRoot(key); ok {
		out.send(r.Addr, m)
		return
	}
	n.routePublish(now, &m, out)
}

// routePublish routes m toward its group's root from here.
func (n *Node) routePublish(now Time, m *Message, out *Outbox) {
	if g := n.group(m.Key); g != nil && g.root {
		n.onPublish(now, m, out)
		return
	}
	if next, ok := n.NextHop(m.Key); ok {
		n.forward(m, next, out)
	}
	// Otherwise this node is the closest but has no group: the message is
	// dropped, best effort.
}

func (n *Node) onPublish(now Time, m *Message, out *Outbox) {
	g := n.group(m.Key)
	if g == nil || !g.root {
		n.routePublish(now, m, out)
		return
	}
	if m.Origin.Addr != n.self.Addr && m.Hops > 0 {
		out.send(m.Origin.Addr, Message{Kind: KindRootAddr, From: n.self, Key: m.Key})
	}
	n.multicast(now, g, out)
}

// multicast numbers a new message at the root and sends it down the tree.
func (n *Node) multicast(now Time, g *group, out *Outbox) {
	g.seq++
	if g.member {
		out.Deliveries = append(out.Deliveries, Delivery{Group: g.key, Seq: g.seq})
	}
	n.sendChildren(now, g, KindMulticast, out)
}

func (n *Node) sendChildren(now Time, g *group, kind Kind, out *Outbox) {
	for _, c := range g.children {
		out.send(c.Addr, Message{Kind: kind, From: n.self, Key: g.key, Seq: g.seq, Path: g.path})
	}
	g.sent = now
}

// onMulticast delivers to a member and forwards down the tree. A message
// whose path from the root already holds this node reveals a loop: the node
// leaves that parent and rejoins.
func (n *Node) onMulticast(now Time, m *Message, out *Outbox) {
	g := n.group(m.Key)
	if g == nil {
		return
	}
	if m.From.Addr == g.parent.Addr {
		g.heard = now
		if !n.setPath(g, m.Path) {
			n.breakLoop(now, g, out)
			return
		}
	}
	g.seq = m.Seq
	if g.member {
		out.Deliveries = append(out.Deliveries, Delivery{Group: g.key, Seq: m.Seq})
	}
	n.sendChildren(now, g, KindMulticast, out)
}

func (n *Node) cachedRoot(key ID) (Ref, bool) {
	for _, c := range n.roots {
		if c.key == key {
			return c.root, true
		}
	}
	return None, false
}

func (n *Node) cacheRoot(key ID, root Ref) {
	for i := range n.roots {
		if n.roots[i].key == key {
			n.roots[i].root = root
			return
		}
	}
	n.roots = append(n.roots, cachedRoot{key: key, root: root})
}
