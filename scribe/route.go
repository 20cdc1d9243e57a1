package scribe

// NextHop returns the next hop toward key, or ok=false when this node is the
// numerically closest live node it knows, so a message for key is delivered
// here. The rules, in order:
//
//  1. leaf set: if key lies within the leaf set's range, the node among the
//     leaf set and this node that is numerically closest to key;
//  2. prefix: the routing table entry that shares one more digit with key
//     than this node does;
//  3. rare case (the entry is empty or was found dead): among all known live
//     nodes sharing at least as long a prefix with key as this node and
//     numerically closer to it, the one numerically closest to key.
//
// Every hop therefore shares a longer prefix with key, or is numerically
// closer to it, so routes have no loops.
func (n *Node) NextHop(key ID) (next Ref, ok bool) {
	if n.leaf.covers(n.self.ID, key) {
		c := n.leaf.closest(n.self, key)
		return c, c.Addr != n.self.Addr
	}
	r := n.space.SharedPrefix(n.self.ID, key)
	if r < n.space.Digits() {
		if e := n.table.get(r, n.space.Digit(key, r)); e.Valid() {
			return e, true
		}
	}
	best := n.self
	consider := func(x Ref) {
		if x.Valid() && n.space.SharedPrefix(x.ID, key) >= r && Closer(key, x.ID, best.ID) {
			best = x
		}
	}
	for _, x := range n.leaf.cw {
		consider(x)
	}
	for _, x := range n.leaf.ccw {
		consider(x)
	}
	for _, x := range n.table.cells {
		consider(x)
	}
	for _, x := range n.neigh.refs {
		consider(x)
	}
	return best, best.Addr != n.self.Addr
}

// forward sends a copy of routed message m one hop further, from this node.
func (n *Node) forward(m *Message, next Ref, out *Outbox) {
	f := *m
	f.From = n.self
	f.Hops++
	out.send(next.Addr, f)
}
