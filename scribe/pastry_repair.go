package scribe

// MarkDead records that peer a has failed, as found by a bounced message or
// a missed heartbeat, and repairs around it: a has no further place in the
// leaf set, routing table or neighbourhood set; the leaf set side it left
// asks its farthest remaining member for its leaf set; each table row it
// left asks another entry of the row for that row; groups whose parent it
// was rejoin through Pastry; children entries naming it are dropped.
func (n *Node) MarkDead(now Time, a Addr, out *Outbox) {
	if a == n.self.Addr || n.isDead(a) {
		return
	}
	if n.dead == nil {
		n.dead = map[Addr]struct{}{}
	}
	n.dead[a] = struct{}{}

	cw, ccw := n.leaf.remove(a)
	asked := NoAddr
	if f, ok := farthest(n.leaf.cw); cw && ok {
		out.send(f.Addr, Message{Kind: KindLeafRequest, From: n.self})
		asked = f.Addr
	}
	if f, ok := farthest(n.leaf.ccw); ccw && ok && f.Addr != asked {
		out.send(f.Addr, Message{Kind: KindLeafRequest, From: n.self})
	}
	var rowsBuf [8]int
	for _, r := range n.table.remove(a, rowsBuf[:0]) {
		for _, x := range n.table.row(r) {
			if x.Valid() {
				out.send(x.Addr, Message{Kind: KindRowRequest, From: n.self, Row: int8(r)})
				break
			}
		}
	}
	n.neigh.remove(a)

	for i := 0; i < len(n.roots); i++ {
		if n.roots[i].root.Addr == a {
			n.roots = append(n.roots[:i], n.roots[i+1:]...)
			i--
		}
	}
	// Iterate over a snapshot: rejoining and pruning change n.groups.
	for _, g := range append([]*group(nil), n.groups...) {
		if g.removeChild(a) {
			n.nchildren--
			n.prune(g, out)
			continue
		}
		if g.parent.Addr == a {
			g.parent = None
			n.sendJoin(now, g, out)
		}
	}
}

// onStateRequest answers a leaf set or routing table row request.
func (n *Node) onStateRequest(m *Message, out *Outbox) {
	refs := []Ref{n.self}
	if m.Kind == KindLeafRequest {
		refs = append(refs, n.leaf.cw...)
		refs = append(refs, n.leaf.ccw...)
	} else {
		for _, x := range n.table.row(int(m.Row)) {
			if x.Valid() {
				refs = append(refs, x)
			}
		}
	}
	out.send(m.From.Addr, Message{Kind: KindStateReply, From: n.self, Refs: refs})
}

// onUndeliverable handles a message returned because its destination (From)
// is dead: the peer is marked dead, routed messages are routed again from
// here around it, and joins and publishes are retried.
func (n *Node) onUndeliverable(now Time, m *Message, out *Outbox) {
	b := m.Bounced
	n.MarkDead(now, m.From.Addr, out)
	switch b.Kind {
	case KindPastryJoin, KindCreate:
		if next, ok := n.NextHop(b.Key); ok {
			n.forward(b, next, out)
		} else if b.Kind == KindCreate {
			n.becomeRoot(n.ensureGroup(b.Key), out)
		}
	case KindPublish:
		n.routePublish(now, b, out)
	}
	// Joins, multicasts and heartbeats were handled by MarkDead: it rejoins
	// groups whose parent died and drops dead children.
}
