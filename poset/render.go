package poset

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// String renders the structure, one node per line, depth first from the
// roots in creation order, indented by depth. A node is written as its
// filter and its subscriptions `[id@iface ...]` (fixed filters say
// `fixed`). In the poset, a node with several parents is written in full
// under the first one reached and as `^ filter` under the others, so every
// edge appears exactly once. Subscriptions kept aside (unsatisfiable
// filters) follow under `aside:`.
func (c *core) String() string {
	var b strings.Builder
	c.newEpoch()
	for _, r := range c.roots.members() {
		c.render(&b, r, 0)
	}
	if len(c.void) > 0 {
		b.WriteString("aside:\n")
		ids := make([]voided, 0, len(c.void))
		for _, e := range c.void {
			ids = append(ids, e)
		}
		slices.SortFunc(ids, func(a, b voided) int { return byID(a.entry, b.entry) })
		for _, e := range ids {
			fmt.Fprintf(&b, "  %s [%d@%d]\n", e.f, e.id, e.from)
		}
	}
	if b.Len() == 0 {
		return "empty\n"
	}
	return b.String()
}

func (c *core) render(b *strings.Builder, n *node, depth int) {
	b.WriteString(strings.Repeat("  ", depth))
	if c.touch(n).visited {
		fmt.Fprintf(b, "^ %s\n", n.text)
		return
	}
	n.visited = true
	b.WriteString(n.text)
	b.WriteString(" ")
	b.WriteString(describeEntries(n))
	b.WriteString("\n")
	for _, ch := range n.children() {
		c.render(b, ch, depth+1)
	}
}

// describeEntries renders a node's subscriptions as [id@iface ...].
func describeEntries(n *node) string {
	var parts []string
	if n.pinned {
		parts = append(parts, "fixed")
	}
	es := slices.Collect(n.subs)
	slices.SortFunc(es, byID)
	for _, e := range es {
		parts = append(parts, fmt.Sprintf("%d@%d", e.id, e.from))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func byID(a, b entry) int { return cmp.Compare(a.id, b.id) }
