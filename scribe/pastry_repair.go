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

	n.neigh.remove(a)
	cw, ccw := n.leaf.remove(a)
	if cw || ccw {
		// Refill the sides from the rest of what this node knows, then ask
		// the far ends for theirs.
		n.eachKnown(func(x Ref) {
			if x.Addr != a {
				n.leaf.consider(n.self.ID, x)
			}
		})
		n.repairLeaves(cw, ccw, NoAddr, out)
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

// repairLeaves asks, for each side flagged, the known live node nearest to
// that side's far end for its leaf set: the side's farthest member or, if
// the side is empty, the nearest known node in that direction. skip is a
// node not to ask (it has just answered).
func (n *Node) repairLeaves(cw, ccw bool, skip Addr, out *Outbox) {
	asked := skip
	ask := func(side []Ref, dist func(ID) ID) {
		f, ok := farthest(side)
		if !ok {
			n.eachKnown(func(x Ref) {
				if !ok || dist(x.ID).Less(dist(f.ID)) {
					f, ok = x, true
				}
			})
		}
		if ok && f.Addr != asked {
			out.send(f.Addr, Message{Kind: KindLeafRequest, From: n.self})
			asked = f.Addr
		}
	}
	if cw {
		ask(n.leaf.cw, func(x ID) ID { return x.Sub(n.self.ID) })
	}
	if ccw {
		ask(n.leaf.ccw, func(x ID) ID { return n.self.ID.Sub(x) })
	}
}

// onStateReply merges a leaf set or table row. While replies bring a leaf
// set side nearer nodes, repair continues from that side's new far end.
func (n *Node) onStateReply(m *Message, out *Outbox) {
	cw := append([]Ref(nil), n.leaf.cw...)
	ccw := append([]Ref(nil), n.leaf.ccw...)
	for _, r := range m.Refs {
		n.Learn(r)
	}
	if m.Row >= 0 {
		return
	}
	n.announceNewLeaves(cw, ccw, out)
	n.repairLeaves(!sameRefs(cw, n.leaf.cw), !sameRefs(ccw, n.leaf.ccw), m.From.Addr, out)
}

// announceNewLeaves tells nodes that entered the leaf set since it held
// cw and ccw about this node, so that leaf sets stay symmetric.
func (n *Node) announceNewLeaves(cw, ccw []Ref, out *Outbox) {
	for _, side := range [2][]Ref{n.leaf.cw, n.leaf.ccw} {
		for _, x := range side {
			if !hasAddr(cw, x.Addr) && !hasAddr(ccw, x.Addr) {
				out.send(x.Addr, Message{Kind: KindAnnounce, From: n.self})
				cw = append(cw, x) // announce once even if on both sides
			}
		}
	}
}

func hasAddr(refs []Ref, a Addr) bool {
	for _, x := range refs {
		if x.Addr == a {
			return true
		}
	}
	return false
}

func sameRefs(a, b []Ref) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Addr != b[i].Addr {
			return false
		}
	}
	return true
}

// eachKnown calls fn with every node in the leaf set, routing table and
// neighbourhood set (a node may be seen more than once).
func (n *Node) eachKnown(fn func(Ref)) {
	for _, x := range n.leaf.cw {
		fn(x)
	}
	for _, x := range n.leaf.ccw {
		fn(x)
	}
	for _, x := range n.table.cells {
		if x.Valid() {
			fn(x)
		}
	}
	for _, x := range n.neigh.refs {
		fn(x)
	}
}

// onStateRequest answers a leaf set or routing table row request.
func (n *Node) onStateRequest(m *Message, out *Outbox) {
	n.Learn(m.From)
	refs := []Ref{n.self}
	row := m.Row
	if m.Kind == KindLeafRequest {
		row = -1
		refs = append(refs, n.leaf.cw...)
		refs = append(refs, n.leaf.ccw...)
	} else {
		for _, x := range n.table.row(int(m.Row)) {
			if x.Valid() {
				refs = append(refs, x)
			}
		}
	}
	out.send(m.From.Addr, Message{Kind: KindStateReply, From: n.self, Refs: refs, Row: row})
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
