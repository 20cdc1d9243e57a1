package poset

import "github.com/sift-pubsub/sift/match"

// View returns the layered view of the structure that RTO sends clients:
// layer 0 holds the roots, layer i+1 the children of layer i nodes not in
// an earlier layer (a poset node appears once, in the layer of its shortest
// path from a root), each layer in creation order and split into vectors
// of at most vectorSize filters (vectorSize < 1 means one vector per
// layer). A Placement sends only the parts of this view that the answers
// so far leave relevant.
func (c *core) View(vectorSize int) [][][]match.Filter {
	c.newEpoch()
	var view [][][]match.Filter
	layer := append([]*node(nil), c.roots.members()...)
	for _, n := range layer {
		c.touch(n).visited = true
	}
	for len(layer) > 0 {
		view = append(view, splitVectors(layer, vectorSize))
		var next []*node
		for _, n := range layer {
			for _, ch := range n.children() {
				if !c.touch(ch).visited {
					ch.visited = true
					next = append(next, ch)
				}
			}
		}
		sortBySeq(next)
		layer = next
	}
	return view
}

func splitVectors(layer []*node, size int) [][]match.Filter {
	if size < 1 {
		size = len(layer)
	}
	var out [][]match.Filter
	for start := 0; start < len(layer); start += size {
		var v []match.Filter
		for _, n := range layer[start:min(start+size, len(layer))] {
			v = append(v, n.key.f)
		}
		out = append(out, v)
	}
	return out
}
