package scribe

import "sort"

// closestLeaves returns up to k leaf set members numerically closest to key,
// closest first.
func (n *Node) closestLeaves(key ID, k int) []Ref {
	if k == 0 {
		return nil
	}
	var cand []Ref
	seen := map[Addr]bool{}
	for _, side := range [2][]Ref{n.leaf.cw, n.leaf.ccw} {
		for _, x := range side {
			if !seen[x.Addr] {
				seen[x.Addr] = true
				cand = append(cand, x)
			}
		}
	}
	sort.Slice(cand, func(i, j int) bool { return Closer(key, cand[i].ID, cand[j].ID) })
	if len(cand) > k {
		cand = cand[:k]
	}
	return cand
}

func (n *Node) addReplica(key ID) {
	i := sort.Search(len(n.replicas), func(i int) bool { return !n.replicas[i].Less(key) })
	if i < len(n.replicas) && n.replicas[i] == key {
		return
	}
	n.replicas = append(n.replicas, ID{})
	copy(n.replicas[i+1:], n.replicas[i:])
	n.replicas[i] = key
}

// HasReplica reports whether this node holds a copy of group key's root
// state, so that it can take over as root.
func (n *Node) HasReplica(key ID) bool {
	i := sort.Search(len(n.replicas), func(i int) bool { return !n.replicas[i].Less(key) })
	return i < len(n.replicas) && n.replicas[i] == key
}
