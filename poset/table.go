package poset

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sift-pubsub/sift/match"
)

// TableConfig configures a routing Table. The zero value is a poset table
// with no neighbours and no merging.
type TableConfig struct {
	// Structure is "poset" (the default when empty), "forest" or
	// "shallow" (shallow.go: inserts that stay cheap as the table grows;
	// no RTO or FF).
	Structure string
	// Neighbours are the interfaces that are neighbour routers; any other
	// interface is a local client, which receives no updates.
	Neighbours []Iface
	// Merge enables perfect merging of the filters forwarded to each
	// neighbour: what a neighbour is sent matches exactly what its unmerged
	// forwarding set matches, and no two filters sent merge perfectly
	// (match.Merge). Kept incrementally (see merger). Off by default.
	Merge bool
	// Structure configures the poset or forest.
	StructureConfig Config
}

// Table is the routing-table state machine of one router: the structure of
// every subscription it holds (from local clients and neighbours) and, per
// neighbour, the forwarding set: the filters forwarded there.
//
// The forwarding set of a neighbour N holds, for each node whose filter has
// a subscription from an interface other than N and none of whose
// ancestors in the structure has one, the filter of such a subscription.
// In the poset, ancestors are all the covering filters, so this is exactly
// SIENA's rule: a filter goes to N only if no filter forwarded to N covers
// it, and never back to the interface it came from. In the forest a node's
// ancestors are only those on its path, so it may forward a filter that a
// filter in another branch covers (more filters, never more events).
//
// The Table is pure: Subscribe and Unsubscribe return the updates to send
// and do no I/O. It is not safe for concurrent use.
type Table struct {
	cfg   TableConfig
	s     *core
	neigh []Iface
	// own holds, per interface, the nodes at which the interface holds
	// the subscription of the node's own canonical text: nearly every
	// subscription, found from its text through the structure's byText,
	// its id in the node's entry from that interface (ownEntry). subs
	// holds the others (a filter kept aside as unsatisfiable, or held
	// by the node of an equivalent filter of another text) by canonical
	// text, with their structure id. Both are per interface so that
	// what one interface holds is read without walking the others'
	// (HeldBy, for a link that resyncs). Why a set of nodes: a map slot
	// of 8 bytes per subscription instead of 24 (text and id), the text
	// being the node's already. A subscription made more than once has
	// its count above one in repeats, a side table empty while none
	// repeats. The sets are nodeTables (nodeKey) rather than maps: a
	// router holds one member per filter.
	own     map[Iface]*nodeTable
	subs    map[Iface]map[string]match.ID
	repeats map[subKey]int
	nsubs   int // distinct subscriptions, over every interface
	nextID  match.ID
	fwd     map[Iface]*fwdSet // per neighbour: node -> forwarded filter
	merged  map[Iface]*merger // per neighbour, when merging: what was sent
	// pending RTO placements and the subscriptions they place
	pending map[*Placement]subKey
}

// subKey names a distinct subscription: its interface and its filter's
// canonical text. The text is the node's own string when the filter has a
// node (Table.Subscribe), so a subscription costs no second copy of it.
type subKey struct {
	from Iface
	text string
}

// tableSub is a distinct subscription: its node when it is the node's
// own text (see Table.own; its id is then in the node's entry), else its
// structure id, and how many times it was subscribed: what lookup returns
// and put records (the table holds the count, when above one, apart).
type tableSub struct {
	n     *node
	id    match.ID
	count int
}

// again counts one more subscription to k if k is present.
func (t *Table) again(k subKey) bool {
	s, ok := t.lookup(k)
	if ok {
		s.count++
		t.put(k, s)
	}
	return ok
}

// lookup returns the subscription k, if present.
func (t *Table) lookup(k subKey) (tableSub, bool) {
	if n := t.s.byText.get(k.text); n != nil {
		if o := t.own[k.from]; o != nil && o.has(n) {
			return tableSub{n: n, count: 1 + t.repeats[k]}, true
		}
	}
	id, ok := t.subs[k.from][k.text]
	if !ok {
		return tableSub{}, false
	}
	return tableSub{id: id, count: 1 + t.repeats[k]}, true
}

// idOf returns the structure id of subscription s of interface from.
func (t *Table) idOf(from Iface, s tableSub) match.ID {
	if s.n == nil {
		return s.id
	}
	id, ok := t.s.ownEntry(s.n, from)
	if !ok {
		panic(fmt.Sprintf("routing table: node %s lists no own subscription of interface %d", s.n.text, from))
	}
	return id
}

// put records (or replaces) subscription k.
func (t *Table) put(k subKey, s tableSub) {
	if s.n != nil {
		m := t.own[k.from]
		if m == nil {
			nt := newNodeTable(nodeKey)
			m = &nt
			t.own[k.from] = m
		}
		if !m.has(s.n) {
			t.nsubs++
			m.add(s.n)
		}
	} else {
		m := t.subs[k.from]
		if m == nil {
			m = make(map[string]match.ID)
			t.subs[k.from] = m
		}
		// An existing key is not assigned again: the map would take k's
		// string in place of the one it holds (the node's own, see keyOf).
		if id, ok := m[k.text]; !ok || id != s.id {
			if !ok {
				t.nsubs++
			}
			m[k.text] = s.id
		}
	}
	switch {
	case s.count > 1 && t.repeats == nil:
		t.repeats = map[subKey]int{k: s.count - 1}
	case s.count > 1:
		t.repeats[k] = s.count - 1
	default:
		delete(t.repeats, k)
	}
}

// drop forgets subscription k (present, as s).
func (t *Table) drop(k subKey, s tableSub) {
	delete(t.repeats, k)
	t.nsubs--
	if s.n != nil {
		m := t.own[k.from]
		if m.remove(s.n); m.len() == 0 {
			delete(t.own, k.from)
		}
		return
	}
	m := t.subs[k.from]
	if delete(m, k.text); len(m) == 0 {
		delete(t.subs, k.from)
	}
}

// keyOf is k with its text shared with node n when n's representative
// has the same canonical text (a node may stand for an equivalent filter
// of another text; n nil: the filter was kept aside).
func keyOf(k subKey, n *node) subKey {
	if n != nil && n.text == k.text {
		k.text = n.text
	}
	return k
}

// NewTable returns an empty routing table.
func NewTable(cfg TableConfig) (*Table, error) {
	t := &Table{
		cfg:    cfg,
		own:    make(map[Iface]*nodeTable),
		subs:   make(map[Iface]map[string]match.ID),
		fwd:    make(map[Iface]*fwdSet),
		merged: make(map[Iface]*merger),
	}
	switch cfg.Structure {
	case "", "poset":
		t.s = NewPoset(cfg.StructureConfig).core
	case "forest":
		t.s = NewForest(cfg.StructureConfig).core
	case "shallow":
		t.s = NewShallow(cfg.StructureConfig).core
	default:
		return nil, fmt.Errorf("routing table: unknown structure %q (valid: poset, forest, shallow)", cfg.Structure)
	}
	t.s.textIDs = true // the table names each subscription by its text too
	for _, n := range cfg.Neighbours {
		if slices.Contains(t.neigh, n) {
			return nil, fmt.Errorf("routing table: neighbour %d listed twice", n)
		}
		t.neigh = append(t.neigh, n)
		t.fwd[n] = newFwdSet()
		if cfg.Merge {
			t.merged[n] = newMerger()
		}
	}
	slices.Sort(t.neigh)
	return t, nil
}

// Subscribe records a subscription to f from interface from and returns
// the updates for the neighbours. Subscribing again with the same filter
// from the same interface only counts it (and changes nothing to forward).
func (t *Table) Subscribe(from Iface, f match.Filter) ([]Update, error) {
	k := subKey{from, f.String()}
	if t.again(k) {
		return nil, nil
	}
	id := t.nextID
	n, err := t.s.addText(id, from, f, k.text)
	if err != nil {
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	t.nextID++
	return t.installed(k, id, n), nil
}

// installed records the new subscription k (structure id id, node n; nil
// for an unsatisfiable filter, which has nothing to forward) and returns
// the updates its node brings to the neighbours: the end every way of
// subscribing (plain, claimed, FF, RTO) shares.
func (t *Table) installed(k subKey, id match.ID, n *node) []Update {
	s := tableSub{id: id, count: 1}
	if n != nil && n.text == k.text {
		s.n = n // the node's own text: the node names it (see own)
	}
	t.put(keyOf(k, n), s)
	if n == nil {
		return nil
	}
	d := diff{}
	t.refresh(d, []*node{n})
	return t.finish(d)
}

// Unsubscribe removes one subscription to f from interface from and returns
// the updates: the removal, together in the same update with every filter
// it had been covering that must now be forwarded. An unknown subscription
// is an error and changes nothing.
func (t *Table) Unsubscribe(from Iface, f match.Filter) ([]Update, error) {
	k := subKey{from, f.String()}
	s, ok := t.lookup(k)
	if !ok {
		return nil, fmt.Errorf("unsubscribe: no subscription to %s from interface %d", f, from)
	}
	if s.count--; s.count > 0 {
		t.put(k, s)
		return nil, nil
	}
	id := t.idOf(from, s)
	t.drop(k, s)
	return t.uninstall(id, k.text)
}

// uninstall takes subscription id (of canonical text text) out of the
// structure and returns the updates for the neighbours.
func (t *Table) uninstall(id match.ID, text string) ([]Update, error) {
	n, gone, starts, err := t.s.remove(id, text)
	if err != nil {
		return nil, fmt.Errorf("unsubscribe: %w", err) // cannot happen: ids are ours
	}
	d := diff{}
	switch {
	case n == nil:
	case gone:
		for _, nb := range t.neigh {
			if old, ok := t.fwd[nb].get(n); ok {
				t.fwd[nb].del(n)
				d.remove(nb, old)
			}
		}
		t.refresh(d, starts)
	default:
		t.refresh(d, []*node{n})
	}
	return t.finish(d), nil
}

// Route returns the interfaces, other than from, that hold a subscription
// matching e: where a router sends the event.
func (t *Table) Route(e match.Event, from Iface) []Iface {
	ifs := t.s.MatchInterfaces(e, nil)
	return slices.DeleteFunc(ifs, func(i Iface) bool { return i == from })
}

// Forwarded returns the filters currently forwarded to neighbour n, in
// canonical order (after merging, when enabled).
func (t *Table) Forwarded(n Iface) []match.Filter {
	if t.cfg.Merge {
		if m := t.merged[n]; m != nil {
			return m.filtersSorted()
		}
		return nil
	}
	out := t.fwd[n].filters(make([]match.Filter, 0, t.ForwardedLen(n)))
	slices.SortFunc(out, match.Filter.Compare)
	return out
}

// ForwardedLen returns len(t.Forwarded(n)).
func (t *Table) ForwardedLen(n Iface) int {
	if t.cfg.Merge {
		if m := t.merged[n]; m != nil {
			return len(m.filtersSorted())
		}
		return 0
	}
	if s := t.fwd[n]; s != nil {
		return s.len()
	}
	return 0
}

// Len returns the number of distinct subscriptions (interface and filter).
func (t *Table) Len() int { return t.nsubs }

// Structure renders the underlying poset or forest.
func (t *Table) Structure() string { return t.s.String() }

// Counters returns the underlying structure's counters.
func (t *Table) Counters() Counters { return t.s.Counters() }

// Count returns how many times interface from subscribed f (0: never, or
// every one was unsubscribed).
func (t *Table) Count(from Iface, f match.Filter) int {
	s, _ := t.lookup(subKey{from, f.String()})
	return s.count
}

// Held is a distinct subscription of one interface: its filter (as
// subscribed), canonical text and count.
type Held struct {
	Filter match.Filter
	Text   string
	N      int
}

// HeldBy returns the distinct subscriptions of interface from in
// canonical text order, in time proportional to what the interface holds:
// for a caller that needs them all at once (a neighbour's link going down
// or resynchronising), so that it need not keep its own copy of what the
// interface subscribed.
func (t *Table) HeldBy(from Iface) []Held {
	m, own := t.subs[from], t.own[from]
	if own == nil {
		own = &nodeTable{}
	}
	out := make([]Held, 0, len(m)+own.len())
	for n := range own.all {
		out = append(out, Held{Filter: n.key.f, Text: n.text, N: 1 + t.repeats[subKey{from, n.text}]})
	}
	for text, id := range m {
		out = append(out, Held{Filter: t.s.filterOf(id, text), Text: text, N: 1 + t.repeats[subKey{from, text}]})
	}
	slices.SortFunc(out, func(a, b Held) int { return strings.Compare(a.Text, b.Text) })
	return out
}
