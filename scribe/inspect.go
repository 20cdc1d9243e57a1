package scribe

// GroupInfo is a read-only view of a node's state for one group.
type GroupInfo struct {
	Key      ID
	Member   bool
	Root     bool
	Parent   Ref
	Children []Ref // shared with the node: do not modify
	Path     []Addr
}

func (g *group) info() GroupInfo {
	return GroupInfo{Key: g.key, Member: g.member, Root: g.root, Parent: g.parent, Children: g.children, Path: g.path}
}

// Group returns the node's state for group key, if it is on that tree.
func (n *Node) Group(key ID) (GroupInfo, bool) {
	if g := n.group(key); g != nil {
		return g.info(), true
	}
	return GroupInfo{}, false
}

// Groups calls fn for every group the node is on the tree of, in key order.
func (n *Node) Groups(fn func(GroupInfo)) {
	for _, g := range n.groups {
		fn(g.info())
	}
}

// ChildrenLoad returns the number of non-empty children tables the node
// holds and the number of entries in them.
func (n *Node) ChildrenLoad() (tables, entries int) {
	for _, g := range n.groups {
		if len(g.children) > 0 {
			tables++
		}
	}
	return tables, n.nchildren
}

// LeafSet returns the leaf set, larger ids (nearest first) then smaller ids
// (nearest first). The slice is a copy.
func (n *Node) LeafSet() []Ref {
	return append(append([]Ref(nil), n.leaf.cw...), n.leaf.ccw...)
}

// TableRows returns the number of routing table rows in use.
func (n *Node) TableRows() int { return n.table.rows() }

// TableEntry returns the routing table entry at row r, column c, or [None].
func (n *Node) TableEntry(r, c int) Ref { return n.table.get(r, c) }
