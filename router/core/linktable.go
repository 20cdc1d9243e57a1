package core

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// LinkTable mirrors, per router link, the filters the neighbour sent
// (what the mesh holds from it), in a fast index of its own, so that "which
// links want this event" is answered per event by the fast index instead
// of the mesh's routing table (whose Route walks the poset: ~1 ms per
// event with 10^4 stock subscriptions behind a link). It changes only
// with Routes messages the mesh accepted, so it holds what the mesh holds.
//
// It also answers from a witness (wire.LinkPublish): the hash of a filter
// the previous router found the event to match. When every link the event
// could go to holds that filter, and the event does match it (one
// Filter.Matches: a neighbour's bug must not make the answer inexact, nor
// travel on in the witness this router sends), each of them wants the
// event, and the index is not consulted. That is the common case of a
// router inside a chain, which forwards the filters of the link behind it
// unchanged to the link in front: the previous router matched the event
// against those very filters. Failing that, a cache of filters that
// matched recent events alike (linkcache.go) may decide; else the index
// does. A witness names a filter by its hash, and when the hashes of held
// filters collide it names each of them: each is tried, and it decides
// only if every link holds that very filter and the event matches it, so
// the answer stays exact.
type LinkTable struct {
	// idx indexes each pooled filter once, under its slot number: one
	// entry however many links hold the filter, and no entry per copy
	// (the table once had an engine of its own, whose owner pages and
	// per-link subscription index said again, for every copy, what a
	// slot and its links say: the links are few, Config.MaxLinks, and
	// the filters many).
	idx *match.Fast
	// pool holds each distinct filter some link holds, hashed by witness
	// (witnessOf), so that a slot's hash is its filter's witness. A slot's
	// references are the links holding it; its head is the first of them
	// (its position, plus one) and more lists the others, a side table
	// empty while no two links hold one filter.
	pool filterPool
	more map[uint32][]uint32
	// repeats counts, per link and pool slot, the copies of a filter the
	// link holds beyond the one its holding stands for: a side table,
	// empty while no link holds a filter twice. Why: a neighbour sends
	// each filter it forwards once, but a Routes message may repeat one.
	repeats map[linkSlot]int
	// pos is the position of each link that holds a filter or held one
	// since it was last dropped, linkAt the link at each position in
	// use, filters how many distinct filters the link at each position
	// holds; freePos lists the positions not in use.
	pos     map[ifaceID]uint32
	linkAt  []ifaceID
	filters []int
	freePos []uint32
	// links lists the positions of the links with at least one filter,
	// in ascending link order.
	links []uint32
	cache *linkCache
	// OnFilter, if set, is told every filter that becomes held (the
	// core's wanted attribute names, wanted.go).
	OnFilter func(match.Filter)
	// routed counts the events routed since the filters last changed,
	// while a compaction is pending (see maybeCompact).
	routed  int
	changed bool

	out     []LinkHit
	matched []match.ID
	hitAt   []int // per position: its hit in out during Route, else -1
}

// linkSlot names a link's copies of one pooled filter.
type linkSlot struct {
	link uint32 // position
	slot uint32
}

// LinkHit is a link an event goes to, with the witness to send along: a
// filter of the link's the event matches (0: none known).
type LinkHit struct {
	Link    ifaceID
	Witness uint64
}

// RouteDecision says what decided route's answer.
type RouteDecision uint8

const (
	DecidedByIndex   RouteDecision = iota // the index matched the event
	DecidedByWitness                      // the witness that came with it
	DecidedByCache                        // filters that matched events alike, or the key equalities of every filter
	DecidedNoLinks                        // no link but the event's own holds a filter
	NumDecisions
)

// NewLinkTable returns an empty link table.
func NewLinkTable() *LinkTable {
	p := newFilterPool()
	p.hashFn = witnessOf
	return &LinkTable{idx: match.NewFast(match.FastConfig{}), pool: p, pos: make(map[ifaceID]uint32), cache: newLinkCache()}
}

// witnessOf is a filter's witness: the hash of its canonical text.
func witnessOf(f match.Filter) uint64 { return wire.FilterHash(f.String()) }

// Apply carries out an accepted Routes message from link id, parsing its
// filters: a snapshot replaces what the link holds, an incremental one
// removes, then adds. The router's core uses ApplyHeld with the filters
// the mesh parsed instead; Apply is for a table fed Routes alone.
func (t *LinkTable) Apply(id ifaceID, r *wire.Routes) error {
	if r.Snapshot {
		t.Drop(id)
	}
	add, err := parseAll(r.Add)
	if err != nil {
		return fmt.Errorf("link routes: added filter: %w", err)
	}
	remove, err := parseAll(r.Remove)
	if err != nil {
		return fmt.Errorf("link routes: removed filter: %w", err)
	}
	return t.ApplyHeld(id, add, remove)
}

func parseAll(texts []string) ([]match.Filter, error) {
	fs := make([]match.Filter, len(texts))
	for i, text := range texts {
		f, err := match.ParseCompact(text)
		if err != nil {
			return nil, err
		}
		fs[i] = f
	}
	return fs, nil
}

// ApplyHeld removes one copy of each filter of remove from what link id
// holds, then adds one of each of add: the net change a Routes message
// made to what the mesh holds from the link (mesh.HeldChange). The
// filters are kept as they are (compacted, never changed: the mesh holds
// the same ones), so a forwarded filter is parsed once. Removing a filter
// the link does not hold is an error.
func (t *LinkTable) ApplyHeld(id ifaceID, add, remove []match.Filter) error {
	defer t.listLinks()
	defer t.cache.forget(id)
	at := t.position(id)
	for _, f := range remove {
		if err := t.remove(at, f); err != nil {
			return err
		}
	}
	for _, f := range add {
		if err := t.add(at, f); err != nil {
			return err
		}
	}
	return nil
}

// position returns link id's position, giving it one if it has none.
func (t *LinkTable) position(id ifaceID) uint32 {
	if at, ok := t.pos[id]; ok {
		return at
	}
	var at uint32
	if n := len(t.freePos); n > 0 {
		at, t.freePos = t.freePos[n-1], t.freePos[:n-1]
	} else {
		at = uint32(len(t.linkAt))
		t.linkAt, t.filters, t.hitAt = append(t.linkAt, 0), append(t.filters, 0), append(t.hitAt, -1)
	}
	t.linkAt[at], t.pos[id] = id, at
	return at
}

// holds reports whether the link at position at holds pool slot s.
func (t *LinkTable) holds(s, at uint32) bool {
	return t.pool.slots[s].head == at+1 || t.pool.slots[s].refs > 1 && slices.Contains(t.more[s], at+1)
}

// add installs one copy of f for the link at position at: a holding of
// f's slot (the slot made, and indexed, when no link held f), or one more
// repeat of the link's holding.
func (t *LinkTable) add(at uint32, f match.Filter) error {
	p := &t.pool
	k := p.hash(f)
	if s, ok := p.find(k, f); ok && t.holds(s, at) {
		if t.repeats == nil {
			t.repeats = make(map[linkSlot]int)
		}
		t.repeats[linkSlot{at, s}]++
		return nil
	}
	s := p.internHashed(k, f)
	if p.slots[s].refs > 1 {
		if t.more == nil {
			t.more = make(map[uint32][]uint32)
		}
		t.more[s] = append(t.more[s], at+1)
	} else {
		f = p.filter(s)
		if err := t.idx.Insert(match.ID(s), f); err != nil {
			p.release(s)
			return fmt.Errorf("link routes: added filter: index insert: %w", err)
		}
		p.slots[s].head = at + 1
		t.cache.count(f, 1)
		if t.OnFilter != nil {
			t.OnFilter(f)
		}
	}
	t.filters[at]++
	t.touch()
	return nil
}

// remove takes out one copy of filter f the link at position at holds: a
// repeat if it has any, else its holding (and the slot, with its index
// entry, when no other link holds f).
func (t *LinkTable) remove(at uint32, f match.Filter) error {
	p := &t.pool
	s, ok := p.find(p.hash(f), f)
	if !ok || !t.holds(s, at) {
		return fmt.Errorf("link routes: removes %q, which the link does not hold", f)
	}
	if ls := (linkSlot{at, s}); t.repeats[ls] > 0 {
		if t.repeats[ls]--; t.repeats[ls] == 0 {
			delete(t.repeats, ls)
		}
		return nil
	}
	t.unhold(s, at)
	return nil
}

// unhold takes the holding of pool slot s by the link at position at
// (which holds it, without repeats) out.
func (t *LinkTable) unhold(s, at uint32) {
	p := &t.pool
	t.filters[at]--
	t.touch()
	if p.slots[s].refs == 1 {
		t.cache.count(p.filter(s), -1)
		if err := t.idx.Delete(match.ID(s)); err != nil {
			panic(fmt.Sprintf("router: link table's index lost filter %d: %v", s, err)) // table invariant
		}
		p.release(s)
		return
	}
	more := t.more[s]
	if p.slots[s].head == at+1 {
		p.slots[s].head = more[len(more)-1]
		more = more[:len(more)-1]
	} else {
		more = slices.DeleteFunc(more, func(h uint32) bool { return h == at+1 })
	}
	if len(more) == 0 {
		delete(t.more, s)
	} else {
		t.more[s] = more
	}
	p.release(s)
}

// Witnessed returns the filters link id holds by witness
// (wire.FilterHash), a filter once per copy, for checks and diagnostics:
// built on each call, from every pooled filter.
func (t *LinkTable) Witnessed(id ifaceID) map[uint64][]match.Filter {
	out := make(map[uint64][]match.Filter)
	at, ok := t.pos[id]
	if !ok {
		return out
	}
	for s := range t.pool.slots {
		if e := &t.pool.slots[s]; e.refs > 0 && t.holds(uint32(s), at) {
			for range 1 + t.repeats[linkSlot{at, uint32(s)}] {
				out[e.hash] = append(out[e.hash], e.f)
			}
		}
	}
	return out
}

// Len returns the distinct filters the links hold, a filter once per link
// holding it.
func (t *LinkTable) Len() int {
	n := 0
	for _, k := range t.filters {
		n += k
	}
	return n
}

// Drop forgets a link's filters. It visits every pooled filter (the
// table keeps no list per link; a link is dropped when it goes down or
// sends a snapshot, and the mesh then visits what the link held anyway).
func (t *LinkTable) Drop(id ifaceID) {
	at, ok := t.pos[id]
	if !ok {
		return
	}
	for s := 1; s < len(t.pool.slots) && t.filters[at] > 0; s++ {
		if t.pool.slots[s].refs > 0 && t.holds(uint32(s), at) {
			t.unhold(uint32(s), at)
		}
	}
	for ls := range t.repeats {
		if ls.link == at {
			delete(t.repeats, ls)
		}
	}
	delete(t.pos, id)
	t.freePos = append(t.freePos, at)
	t.cache.forget(id)
	t.listLinks()
}

// listLinks refreshes links.
func (t *LinkTable) listLinks() {
	t.links = t.links[:0]
	for _, at := range t.pos {
		if t.filters[at] > 0 {
			t.links = append(t.links, at)
		}
	}
	slices.SortFunc(t.links, func(a, b uint32) int { return cmp.Compare(t.linkAt[a], t.linkAt[b]) })
}

// touch notes that the filters changed.
func (t *LinkTable) touch() { t.changed, t.routed = true, 0 }

// maybeCompact counts one event routed and compacts the index once the
// filters have stayed unchanged while compactAfter of them were (as the
// engine does: see Engine.maybeCompact).
func (t *LinkTable) maybeCompact() {
	if !t.changed {
		return
	}
	if t.routed++; t.routed < compactAfter(t.idx.Len()) {
		return
	}
	t.changed = false
	if t.idx.Len() <= compactMaxSubs {
		t.idx.Compact()
	}
}

// Route returns the links whose filters e matches, never the one it came
// from, in ascending id order, each with a witness for the next router
// (aliasing scratch space, valid until the next call), and what decided.
// witness, when not 0, names a filter the previous router found e to
// match, checked before it decides (see linkTable).
func (t *LinkTable) Route(from ifaceID, e match.Event, witness uint64) ([]LinkHit, RouteDecision) {
	t.out = t.out[:0]
	if len(t.links) == 0 || len(t.links) == 1 && t.linkAt[t.links[0]] == from {
		return nil, DecidedNoLinks // nowhere to go: a leaf of the tree
	}
	t.maybeCompact()
	if witness != 0 {
		if t.resolve(from, e, witness) {
			return t.out, DecidedByWitness
		}
		t.out = t.out[:0]
	}
	key := t.cache.keyOf(e)
	if t.cache.excludes(&key) {
		return nil, DecidedByCache
	}
	if t.fromCache(from, &key, e) {
		return t.out, DecidedByCache
	}
	t.out = t.out[:0]
	t.routeIndex(from, e, &key)
	return t.out, DecidedByIndex
}

// routeIndex fills t.out from the index's matches: every link but from
// holding a filter e matches, in ascending id order, with the witness of
// the first such filter in match order, each remembered in the cache.
func (t *LinkTable) routeIndex(from ifaceID, e match.Event, key *keyValue) {
	t.matched = t.idx.Match(e, t.matched[:0])
	for _, m := range t.matched {
		s := uint32(m)
		t.hit(from, s, t.pool.slots[s].head-1, key)
		if t.pool.slots[s].refs > 1 {
			for _, h := range t.more[s] {
				t.hit(from, s, h-1, key)
			}
		}
	}
	for i := range t.hitAt {
		t.hitAt[i] = -1
	}
	sortLinkHits(t.out)
}

// hit adds to t.out the link at position at, which holds pool slot s that
// the event being routed matches, unless it is from or there already.
func (t *LinkTable) hit(from ifaceID, s, at uint32, key *keyValue) {
	id := t.linkAt[at]
	if id == from || t.hitAt[at] >= 0 {
		return
	}
	t.hitAt[at] = len(t.out)
	w := t.pool.slots[s].hash
	t.out = append(t.out, LinkHit{Link: id, Witness: w})
	t.cache.remember(id, t.filters[at], key, t.pool.filter(s), w)
}

// sortLinkHits sorts hits by link: by insertion for the few links an event
// usually reaches, else with slices.SortFunc (see sortHits).
func sortLinkHits(h []LinkHit) {
	if len(h) > 16 {
		slices.SortFunc(h, func(a, b LinkHit) int { return cmp.Compare(a.Link, b.Link) })
		return
	}
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && h[j].Link < h[j-1].Link; j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}

// fromCache fills t.out with every link but from when the cache finds for
// each a filter e matches, and reports whether it did.
func (t *LinkTable) fromCache(from ifaceID, key *keyValue, e match.Event) bool {
	for _, at := range t.links {
		id := t.linkAt[at]
		if id == from {
			continue
		}
		cf, ok := t.cache.lookup(id, key, e)
		if !ok {
			return false
		}
		t.out = append(t.out, LinkHit{Link: id, Witness: cf.witness})
	}
	return true
}

// resolve fills t.out with every link but from when each holds the
// witnessed filter and e matches it, passing the witness on, and reports
// whether it did. A witness names one slot, or several when witnesses
// collide: each is tried.
func (t *LinkTable) resolve(from ifaceID, e match.Event, witness uint64) bool {
	p := &t.pool
	found := false
	p.each(witness, func(s uint32) bool {
		t.out = t.out[:0]
		for _, at := range t.links {
			id := t.linkAt[at]
			if id == from {
				continue
			}
			if !t.holds(s, at) {
				return true
			}
			t.out = append(t.out, LinkHit{Link: id, Witness: witness})
		}
		found = p.filter(s).Matches(e) // last: the dearest test
		return !found
	})
	return found
}
