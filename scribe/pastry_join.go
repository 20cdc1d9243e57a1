package scribe

// JoinNetwork starts this node's Pastry join through bootstrap, a live node
// that should be near it by proximity. The join message is routed to this
// node's own id; every node on the route answers with routing state, the
// bootstrap adds its neighbourhood set and the numerically closest node its
// leaf set. This node learns from each answer and announces itself to every
// node it heard of, which insert it in turn. An invalid bootstrap starts a
// new overlay with this node alone.
func (n *Node) JoinNetwork(bootstrap Ref, out *Outbox) {
	if !bootstrap.Valid() {
		n.joined = true
		return
	}
	n.told = map[Addr]struct{}{}
	out.send(bootstrap.Addr, Message{Kind: KindPastryJoin, From: n.self, Origin: n.self, Key: n.self.ID})
}

// onPastryJoin answers a joining node with the rows of this node's table it
// can use (those up to the length of their shared prefix), then forwards the
// join or, as the numerically closest node, adds its leaf set.
func (n *Node) onPastryJoin(m *Message, out *Outbox) {
	joiner := m.Origin
	refs := []Ref{n.self}
	shared := n.space.SharedPrefix(n.self.ID, joiner.ID)
	for r := 0; r <= shared && r < n.table.rows(); r++ {
		for _, x := range n.table.row(r) {
			if x.Valid() {
				refs = append(refs, x)
			}
		}
	}
	if m.Hops == 0 {
		refs = append(refs, n.neigh.refs...)
	}
	next, ok := n.NextHop(joiner.ID)
	if ok && next.Addr == joiner.Addr {
		ok = false // the joiner announced itself early: this is the closest other node
	}
	if !ok {
		refs = append(refs, n.leaf.cw...)
		refs = append(refs, n.leaf.ccw...)
	}
	out.send(joiner.Addr, Message{Kind: KindJoinState, From: n.self, Key: joiner.ID, Refs: refs, Final: !ok})
	if ok {
		n.forward(m, next, out)
	}
}

// onJoinState merges routing state sent to this joining node. Once the
// final state (with the leaf set) has arrived, the node announces itself to
// every peer it has heard of and not told yet; announcing earlier could make
// the join route lead back to the joiner.
func (n *Node) onJoinState(m *Message, out *Outbox) {
	for _, r := range m.Refs {
		n.Learn(r)
	}
	if n.told == nil {
		n.told = map[Addr]struct{}{}
	}
	n.heard = append(n.heard, m.Refs...)
	if m.Final {
		n.joined = true
	}
	if !n.joined {
		return
	}
	for _, r := range n.heard {
		if _, done := n.told[r.Addr]; done || r.Addr == n.self.Addr || n.isDead(r.Addr) {
			continue
		}
		n.told[r.Addr] = struct{}{}
		out.send(r.Addr, Message{Kind: KindAnnounce, From: n.self})
	}
	n.heard = n.heard[:0]
}
