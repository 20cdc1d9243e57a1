package poset

import (
	"fmt"
	"slices"

	"pgregory.net/rapid"
)

// forceKids draws whether child indexes are built at every size for the
// rest of the property run; it returns the function that restores the
// default.
func forceKids(t *rapid.T) func() {
	old := childIndexMin
	if rapid.Bool().Draw(t, "child index everywhere") {
		childIndexMin = 1
	}
	return func() { childIndexMin = old }
}

// checkKids checks that every child index holds exactly its node's
// children, in the buckets of their first string equality.
func checkKids(c *core) error {
	for _, n := range c.all.list {
		if n.kids == nil {
			continue
		}
		var got []*node
		for _, g := range n.kids.groups {
			if len(g.byHash) != len(g.buckets) {
				return fmt.Errorf("node %s: %d bucket keys for %d buckets", n.text, len(g.byHash), len(g.buckets))
			}
			for h, i := range g.byHash {
				b := g.buckets[i]
				if b.hash != h || len(b.nodes) == 0 {
					return fmt.Errorf("node %s: bucket %d misindexed or empty", n.text, i)
				}
				for _, ch := range b.nodes {
					if ch.key.eqAttr != g.attr || ch.key.eqHash != h {
						return fmt.Errorf("node %s: child %s in the wrong bucket", n.text, ch.text)
					}
				}
				got = append(got, b.nodes...)
			}
		}
		slices.SortFunc(got, func(a, b *node) int { return cmpSeq(a, b.seq) })
		if !slices.Equal(got, n.children) {
			return fmt.Errorf("node %s: child index holds %d nodes, %d children", n.text, len(got), len(n.children))
		}
	}
	return nil
}
