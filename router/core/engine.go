package core

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// ifaceID names an interface of the router: a local client connection
// now, a neighbour router link once routers form a mesh.
type ifaceID = ConnID

// IfaceKind says what is on the other side of an interface.
type IfaceKind uint8

const (
	// KindClient is a local client connection: it gets every matching event,
	// including its own publications.
	KindClient IfaceKind = iota + 1
	// KindNeighbour is a link to another router: events never go back to
	// the neighbour they came from.
	KindNeighbour
)

func (k IfaceKind) String() string {
	if k == KindNeighbour {
		return "neighbour"
	}
	return "client"
}

// Engine is the router's subscription table and per-event routing, as a
// pure state machine: no goroutines, sockets or clocks. Its inputs are
// attach, detach, subscribe, unsubscribe and route; its outputs are return
// values. The matching loop owns it (match.Index is not safe for
// concurrent use).
type Engine struct {
	idx     match.Index
	maxSubs int // per interface; 0 means unlimited
	// owner holds, per index entry id, its interface, subscription id and
	// filter (a pool slot: the one place the engine keeps filters). Ids
	// are dense (freed ids are reused, free), so owner is a paged slice,
	// not a map: route looks up every match, and at 10^6 subscriptions a
	// map entry per subscription costs several times its payload.
	owner  ownerPages
	free   []match.ID
	pool   filterPool // the subscriptions' filters, one copy per distinct filter
	Ifaces map[ifaceID]*ifaceState
	// routed counts the events routed since the subscriptions last
	// changed, while a compaction is pending (see maybeCompact).
	routed  int
	changed bool
	// ifacesOnly: route reports the matching interfaces without their
	// subscription ids (the link table needs only the links).
	ifacesOnly bool
	// copies: the engine lists, per pooled filter, the index entries
	// holding it (a chain through subRef.next from the slot's head), so
	// that the link table finds which links hold a filter, and a link's
	// copy of it, from the filter's witness alone (its pool hashes by
	// witness). Off for the router's own engine, where one filter may
	// have very many subscriptions (a chain is walked to unlink an entry).
	copies bool
	// OnFilter, if set, is told every filter subscribe installs (the
	// loop's wanted attribute names, wanted.go).
	OnFilter func(match.Filter)

	// version counts the changes of the subscriptions (see RouteBatch).
	version uint64

	matched []match.ID
	batch   [][]match.ID // RouteBatch's matches, per event
	hits    []Hit
	hitSt   []*ifaceState // the interfaces of hits, in the same order
}

// Compaction: an index built one subscription at a time (as clients
// subscribe) is a log-structured set of segments; one compacted segment
// matches faster, but compacting stalls the loop for a time proportional
// to the subscriptions (docs/benchmarks.md, "Compaction of the router's
// index"), so the engine does it once the subscriptions have stayed
// unchanged while compactAfter(n) events were routed, and only up to
// compactMaxSubs subscriptions.
const (
	compactMinEvents = 256
	compactMaxSubs   = 1 << 17
)

func compactAfter(n int) int { return max(compactMinEvents, n/4) }

// subRef is what the engine holds of index entry id: which interface,
// which subscription, and the pool slot of its filter.
type subRef struct {
	iface  *ifaceState
	sub    uint64
	filter uint32 // filterPool slot
	next   uint32 // the next entry holding the same slot (when copies; 0: none)
}

// ownerPages is a slice of subRefs indexed by match.ID in pages of a
// fixed size: growing it never copies what it holds (an append-grown
// slice of 10^6 entries copies tens of megabytes and holds old and new at
// once while it does).
type ownerPages struct {
	pages [][]subRef
	n     int // entries in use: ids 0..n-1
}

const ownerPageBits = 12

func (o *ownerPages) at(id match.ID) *subRef {
	return &o.pages[id>>ownerPageBits][id&(1<<ownerPageBits-1)]
}

// grow adds one zero entry and returns its id.
func (o *ownerPages) grow() match.ID {
	if o.n == len(o.pages)<<ownerPageBits {
		o.pages = append(o.pages, make([]subRef, 1<<ownerPageBits))
	}
	o.n++
	return match.ID(o.n - 1)
}

// ifaceState is one interface's subscriptions: subscription id to index
// entry id (the entry's subRef holds the filter).
type ifaceState struct {
	id     ifaceID
	kind   IfaceKind
	subs   *subIndex
	hitIdx int // index into engine.hits during route, -1 otherwise
}

// Len returns the interface's number of subscriptions.
func (st *ifaceState) Len() int { return st.subs.Len() }

// Hit is one interface's share of an event: the subscriptions it matched,
// or, when the engine collects interfaces only, the first of them in match
// order.
type Hit struct {
	Iface ifaceID
	Subs  []uint64
	first uint64
}

// NewEngine returns an empty engine over idx.
func NewEngine(idx match.Index, maxSubsPerIface int) *Engine {
	e := &Engine{
		idx:     idx,
		maxSubs: maxSubsPerIface,
		Ifaces:  make(map[ifaceID]*ifaceState),
		pool:    newFilterPool(),
	}
	e.owner.grow() // id 0 is never used
	return e
}

// Filter returns the filter of subscription sub of interface id.
func (e *Engine) Filter(id ifaceID, sub uint64) (match.Filter, bool) {
	st, ok := e.Ifaces[id]
	if !ok {
		return match.Filter{}, false
	}
	x, ok := st.subs.Get(sub)
	if !ok {
		return match.Filter{}, false
	}
	return e.pool.filter(e.owner.at(x).filter), true
}

// Subs yields every subscription of interface id and its filter, in
// subscription id order (none for an unknown interface). The engine must
// not change while it is iterated.
func (e *Engine) Subs(id ifaceID) iter.Seq2[uint64, match.Filter] {
	return func(yield func(uint64, match.Filter) bool) {
		st, ok := e.Ifaces[id]
		if !ok {
			return
		}
		for sub, x := range st.subs.All() {
			if !yield(sub, e.filterOf(x)) {
				return
			}
		}
	}
}

// Attach adds an interface with no subscriptions.
func (e *Engine) Attach(id ifaceID, kind IfaceKind) error {
	if _, dup := e.Ifaces[id]; dup {
		return fmt.Errorf("interface %d attached twice", id)
	}
	e.Ifaces[id] = &ifaceState{id: id, kind: kind, subs: newSubIndex(), hitIdx: -1}
	return nil
}

// Detach removes an interface and all its subscriptions, returning how many
// it had. Unknown interfaces are ignored (Detach is idempotent).
func (e *Engine) Detach(id ifaceID) int {
	st, ok := e.Ifaces[id]
	if !ok {
		return 0
	}
	for _, x := range st.subs.All() {
		e.mustDelete(x)
	}
	delete(e.Ifaces, id)
	e.touch()
	return st.subs.Len()
}

// Subscribe installs filter text under (iface, sub). A malformed filter,
// a duplicate id or a full interface is a *wire.ProtocolError and installs
// nothing.
func (e *Engine) Subscribe(id ifaceID, sub uint64, text string) error {
	if _, ok := e.Ifaces[id]; !ok {
		return fmt.Errorf("subscribe on unknown interface %d", id)
	}
	f, err := match.ParseCompact(text) // held for the subscription's life
	if err != nil {
		return wire.Errorf(wire.CodeBadFilter, "filter %s", err)
	}
	return e.SubscribeFilter(id, sub, f)
}

// SubscribeFilter is Subscribe for a filter parsed already, which the
// engine keeps (or an equal one it holds): f must be compacted
// (match.Compact) and never changed by the caller. Why: the link table
// installs the filters the mesh parsed from a neighbour's Routes, so a
// forwarded filter is parsed once and its constraints held once.
func (e *Engine) SubscribeFilter(id ifaceID, sub uint64, f match.Filter) error {
	return e.subscribeHashed(id, sub, f, e.pool.hash(f))
}

// subscribeHashed is SubscribeFilter of f, whose pool hash is h.
func (e *Engine) subscribeHashed(id ifaceID, sub uint64, f match.Filter, h uint64) error {
	st, ok := e.Ifaces[id]
	if !ok {
		return fmt.Errorf("subscribe on unknown interface %d", id)
	}
	if _, dup := st.subs.Get(sub); dup {
		return wire.Errorf(wire.CodeDuplicateSubscription, "subscription id %d is already in use", sub)
	}
	if e.maxSubs > 0 && st.subs.Len() >= e.maxSubs {
		return wire.Errorf(wire.CodeTooManySubscriptions, "connection already has %d subscriptions, the limit", e.maxSubs)
	}
	x := e.newID()
	slot := e.pool.internHashed(h, f)
	f = e.pool.filter(slot)
	if err := e.idx.Insert(x, f); err != nil {
		e.pool.release(slot)
		e.free = append(e.free, x)
		return fmt.Errorf("index insert: %w", err)
	}
	st.subs.Put(sub, x)
	*e.owner.at(x) = subRef{iface: st, sub: sub, filter: slot}
	e.listCopy(x)
	e.touch()
	if e.OnFilter != nil {
		e.OnFilter(f)
	}
	return nil
}

// Unsubscribe removes (iface, sub); an unknown id is a *wire.ProtocolError.
func (e *Engine) Unsubscribe(id ifaceID, sub uint64) error {
	st, ok := e.Ifaces[id]
	if !ok {
		return fmt.Errorf("unsubscribe on unknown interface %d", id)
	}
	x, ok := st.subs.Delete(sub)
	if !ok {
		return wire.Errorf(wire.CodeUnknownSubscription, "no subscription %d on this connection", sub)
	}
	e.mustDelete(x)
	e.touch()
	return nil
}

func (e *Engine) mustDelete(idx match.ID) {
	if err := e.idx.Delete(idx); err != nil {
		panic(fmt.Sprintf("router: index lost subscription %d: %v", idx, err)) // engine invariant
	}
	e.unlistCopy(idx)
	e.pool.release(e.owner.at(idx).filter)
	*e.owner.at(idx) = subRef{}
	e.free = append(e.free, idx)
}

// listCopy records entry x (just installed) among its slot's entries,
// first, when the engine lists copies.
func (e *Engine) listCopy(x match.ID) {
	if !e.copies {
		return
	}
	if x > math.MaxUint32 {
		panic(fmt.Sprintf("router: index entry %d past the copies list's ids", x)) // ids are dense: one per live subscription
	}
	ref := e.owner.at(x)
	slot := &e.pool.slots[ref.filter]
	ref.next, slot.head = slot.head, uint32(x)
}

// unlistCopy takes entry x out of its slot's entries.
func (e *Engine) unlistCopy(x match.ID) {
	if !e.copies {
		return
	}
	ref := e.owner.at(x)
	at := &e.pool.slots[ref.filter].head
	for *at != uint32(x) {
		at = &e.owner.at(match.ID(*at)).next
	}
	*at = ref.next
}

// newID returns an unused index id: a freed one if any, else the next.
func (e *Engine) newID() match.ID {
	if n := len(e.free); n > 0 {
		id := e.free[n-1]
		e.free = e.free[:n-1]
		return id
	}
	return e.owner.grow()
}

// touch notes that the subscriptions changed.
func (e *Engine) touch() {
	e.changed, e.routed = true, 0
	e.version++
}

// maybeCompact compacts the index once the subscriptions have been
// stable for compactAfter events (see compactMaxSubs).
func (e *Engine) maybeCompact() { e.countRouted(1) }

// countRouted counts n events routed and compacts the index once enough
// were routed since the subscriptions last changed (see maybeCompact).
func (e *Engine) countRouted(n int) {
	if !e.changed {
		return
	}
	if e.routed += n; e.routed < compactAfter(e.idx.Len()) {
		return
	}
	e.changed = false
	if c, ok := e.idx.(match.Compacter); ok && e.idx.Len() <= compactMaxSubs {
		c.Compact()
	}
}

// Route returns, per interface, the subscriptions an event from `from`
// matches, never sending back to a neighbour it came from. Interfaces come
// in ascending id order and subscription ids ascending. The result aliases
// the engine's scratch space: it is valid until the next call.
func (e *Engine) Route(from ifaceID, ev match.Event) []Hit {
	e.maybeCompact()
	e.matched = e.idx.Match(ev, e.matched[:0])
	return e.routeMatched(from, e.matched)
}

// routeMatched is Route of an event whose index matches are matched.
func (e *Engine) routeMatched(from ifaceID, matched []match.ID) []Hit {
	e.hits, e.hitSt = e.hits[:0], e.hitSt[:0]
	for _, m := range matched {
		ref := e.owner.at(m)
		st := ref.iface
		if st.id == from && st.kind == KindNeighbour {
			continue
		}
		if st.hitIdx < 0 {
			st.hitIdx = len(e.hits)
			e.hits = e.grow()
			e.hits[st.hitIdx].Iface = st.id
			if e.ifacesOnly {
				e.hits[st.hitIdx].first = ref.sub
			}
			e.hitSt = append(e.hitSt, st)
		}
		if !e.ifacesOnly {
			h := &e.hits[st.hitIdx]
			h.Subs = append(h.Subs, ref.sub)
		}
	}
	for _, st := range e.hitSt {
		st.hitIdx = -1
	}
	clear(e.hitSt) // not to keep a detached interface's state alive
	if !e.ifacesOnly {
		for i := range e.hits {
			sortIDs(e.hits[i].Subs)
		}
	}
	sortHits(e.hits)
	return e.hits
}

// sortHits sorts hits by interface: by insertion, comparing ids in place,
// for the few interfaces an event usually reaches (slices.SortFunc calls
// its comparison function once per comparison, which showed in the
// matching loop's profile; docs/benchmarks.md has the figures), else with
// slices.SortFunc.
func sortHits(h []Hit) {
	if len(h) > 16 {
		slices.SortFunc(h, func(a, b Hit) int { return cmp.Compare(a.Iface, b.Iface) })
		return
	}
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && h[j].Iface < h[j-1].Iface; j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}

// sortIDs sorts subscription ids: by insertion for the few an interface
// usually matches per event (slices.Sort's generic call chain cost ~50 ns
// per hit at the far router of the chain benchmark), else with
// slices.Sort.
func sortIDs(ids []uint64) {
	if len(ids) > 16 {
		slices.Sort(ids)
		return
	}
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
}

// grow extends hits by one entry, reusing the subs slice an earlier call
// left in the backing array.
func (e *Engine) grow() []Hit {
	n := len(e.hits)
	if n < cap(e.hits) {
		e.hits = e.hits[:n+1]
		e.hits[n].Subs = e.hits[n].Subs[:0]
		return e.hits
	}
	return append(e.hits, Hit{})
}

// InterfaceSummary describes one interface of a router (a client
// connection now, a neighbour router later) in a SubscriptionSummary.
type InterfaceSummary struct {
	ID            uint64   `json:"id"`
	Kind          string   `json:"kind"`
	Subscriptions int      `json:"subscriptions"`
	Filters       []string `json:"filters,omitempty"`
}

// Summary lists the interfaces in id order, with their filters (in
// subscription id order) when withFilters is set.
func (e *Engine) Summary(withFilters bool) []InterfaceSummary {
	out := make([]InterfaceSummary, 0, len(e.Ifaces))
	for _, st := range e.Ifaces {
		s := InterfaceSummary{ID: uint64(st.id), Kind: st.kind.String(), Subscriptions: st.subs.Len()}
		if withFilters {
			for id, x := range st.subs.All() {
				s.Filters = append(s.Filters, fmt.Sprintf("%d: %s", id, e.filterOf(x)))
			}
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b InterfaceSummary) int { return cmp.Compare(ifaceID(a.ID), ifaceID(b.ID)) })
	return out
}

// Filters returns the number of distinct filters the subscriptions hold
// (each held once, however many subscriptions use it).
func (e *Engine) Filters() int { return e.pool.len() }

// filterOf returns index entry x's filter.
func (e *Engine) filterOf(x match.ID) match.Filter { return e.pool.filter(e.owner.at(x).filter) }

// Subscriptions returns the total number of installed Subscriptions.
func (e *Engine) Subscriptions() int { return e.idx.Len() }
