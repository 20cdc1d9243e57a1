package scribe

// Create routes a CREATE for group key; the numerically closest live node
// becomes its root and replicates the root state on its k closest nodes.
func (n *Node) Create(now Time, key ID, out *Outbox) {
	m := Message{Kind: KindCreate, From: n.self, Origin: n.self, Key: key}
	n.onCreate(now, &m, out)
}

func (n *Node) onCreate(now Time, m *Message, out *Outbox) {
	if next, ok := n.NextHop(m.Key); ok {
		n.forward(m, next, out)
		return
	}
	n.becomeRoot(n.ensureGroup(m.Key), out)
}

// Join makes this node a member of group key. If it is not yet on the tree it
// routes a JOIN toward the group id.
func (n *Node) Join(now Time, key ID, out *Outbox) {
	if g := n.group(key); g != nil {
		g.member = true
		return
	}
	g := n.ensureGroup(key)
	g.member = true
	n.sendJoin(now, g, out)
}

// sendJoin routes a JOIN for g from this node: the next hop becomes the
// parent. With no next hop this node is the numerically closest and becomes
// the root.
func (n *Node) sendJoin(now Time, g *group, out *Outbox) {
	next, ok := n.NextHop(g.key)
	if !ok {
		n.becomeRoot(g, out)
		return
	}
	g.root = false
	g.parent = next
	g.heard = now
	out.send(next.Addr, Message{Kind: KindJoin, From: n.self, Origin: n.self, Key: g.key})
}

// onJoin is Scribe's forward upcall for JOIN (and the handler for a direct
// join after a bottleneck redirect): the sender becomes a child, and the
// JOIN stops here if this node was already on the tree; otherwise this node
// joins in turn.
func (n *Node) onJoin(now Time, m *Message, out *Outbox) {
	if g := n.group(m.Key); g != nil {
		n.addChild(now, g, m.From, out)
		return
	}
	g := n.ensureGroup(m.Key)
	n.addChild(now, g, m.From, out)
	n.sendJoin(now, g, out)
}

// becomeRoot makes this node g's root and sends the root state to the k
// nodes of its leaf set closest to the group id.
func (n *Node) becomeRoot(g *group, out *Outbox) {
	g.root = true
	g.parent = None
	g.path = []Addr{n.self.Addr}
	for _, r := range n.closestLeaves(g.key, n.cfg.Replicas) {
		out.send(r.Addr, Message{Kind: KindReplica, From: n.self, Key: g.key})
	}
}
