package scribe

import "sort"

// group is one node's state for one Scribe group: whether it is a member or
// the root, its parent and its children table.
type group struct {
	key      ID
	member   bool
	root     bool
	parent   Ref
	children []Ref
	path     []Addr // path from the root to this node, both included; shared, never modified
	heard    Time   // last time the parent was heard from
	sent     Time   // last time anything was sent to the children
	seq      uint64 // root: last sequence number assigned; others: last received
}

func (g *group) hasChild(a Addr) bool {
	for _, c := range g.children {
		if c.Addr == a {
			return true
		}
	}
	return false
}

// removeChild deletes a from the children table and reports whether it was there.
func (g *group) removeChild(a Addr) bool {
	for i, c := range g.children {
		if c.Addr == a {
			g.children = append(g.children[:i], g.children[i+1:]...)
			return true
		}
	}
	return false
}

// group returns this node's state for key, or nil.
func (n *Node) group(key ID) *group {
	i := n.groupIndex(key)
	if i < len(n.groups) && n.groups[i].key == key {
		return n.groups[i]
	}
	return nil
}

func (n *Node) groupIndex(key ID) int {
	return sort.Search(len(n.groups), func(i int) bool { return !n.groups[i].key.Less(key) })
}

// ensureGroup returns this node's state for key, creating it if needed.
func (n *Node) ensureGroup(key ID) *group {
	i := n.groupIndex(key)
	if i < len(n.groups) && n.groups[i].key == key {
		return n.groups[i]
	}
	g := &group{key: key, parent: None}
	n.groups = append(n.groups, nil)
	copy(n.groups[i+1:], n.groups[i:])
	n.groups[i] = g
	return g
}

// dropGroup forgets key entirely.
func (n *Node) dropGroup(g *group) {
	i := n.groupIndex(g.key)
	if i < len(n.groups) && n.groups[i] == g {
		n.nchildren -= len(g.children)
		n.groups = append(n.groups[:i], n.groups[i+1:]...)
	}
}

// addChild adopts c for g, then runs the bottleneck remover if the node is
// over its children cap.
func (n *Node) addChild(now Time, g *group, c Ref, out *Outbox) {
	if c.Addr == n.self.Addr || g.hasChild(c.Addr) {
		return
	}
	g.children = append(g.children, c)
	n.nchildren++
	if n.cfg.MaxChildren > 0 && n.nchildren > n.cfg.MaxChildren {
		n.shed(now, out)
	}
}

// setPath records this node's path from the root given its parent's path,
// allocating only when it changed. It reports false, and changes nothing, if
// this node is already on the parent's path: the tree has a loop.
func (n *Node) setPath(g *group, parentPath []Addr) bool {
	for _, a := range parentPath {
		if a == n.self.Addr {
			return false
		}
	}
	if len(g.path) == len(parentPath)+1 && g.path[len(parentPath)] == n.self.Addr {
		same := true
		for i, a := range parentPath {
			if g.path[i] != a {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	p := make([]Addr, len(parentPath)+1)
	copy(p, parentPath)
	p[len(parentPath)] = n.self.Addr
	g.path = p
	return true
}
