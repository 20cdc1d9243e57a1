package core

import (
	"fmt"
	"slices"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// LinkTable mirrors, per router link, the filters the neighbour sent
// (what the mesh holds from it), in an engine of its own, so that "which
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
	Engine *Engine
	next   uint64
	// links lists the links with at least one filter, ascending.
	links []ifaceID
	// repeats counts, per link and pool slot, the copies of a filter the
	// link holds beyond the one engine entry that stands for them all: a
	// side table, empty while no link holds a filter twice. Why: a
	// neighbour sends each filter it forwards once, but a Routes message
	// may repeat one, and an entry per copy would cost an index entry
	// each and make the slot's list of entries long (it is walked).
	repeats map[linkSlot]int
	cache   *linkCache
	out     []LinkHit
}

// linkSlot names a link's copies of one pooled filter.
type linkSlot struct {
	link ifaceID
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

// NewLinkTable returns an empty link table. Its engine keeps no map of
// its own for witnesses: the engine's filter pool hashes each filter by
// its witness, so a slot's hash is the witness of its filter, and the
// engine lists the entries (link copies) holding each slot; a witness
// names its filter's slot (or slots, when witnesses collide), and that
// slot its copies.
func NewLinkTable() *LinkTable {
	eng := NewEngine(match.NewFast(match.FastConfig{}), 0)
	eng.ifacesOnly = true
	eng.copies = true
	eng.pool.hashFn = witnessOf
	return &LinkTable{Engine: eng, cache: newLinkCache()}
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
	if _, ok := t.Engine.Ifaces[id]; !ok {
		if err := t.Engine.Attach(id, KindNeighbour); err != nil {
			return err
		}
	}
	for _, f := range remove {
		if err := t.remove(id, f); err != nil {
			return err
		}
	}
	for _, f := range add {
		if err := t.add(id, f); err != nil {
			return err
		}
	}
	return nil
}

// add installs one copy of f for link id: an engine entry, or one more
// repeat of the entry the link has for an equal filter.
func (t *LinkTable) add(id ifaceID, f match.Filter) error {
	p := &t.Engine.pool
	k := p.hash(f)
	if s, ok := p.find(k, f); ok {
		if _, held := t.Engine.copyOn(s, id); held {
			if t.repeats == nil {
				t.repeats = make(map[linkSlot]int)
			}
			t.repeats[linkSlot{id, s}]++
			t.cache.count(p.filter(s), 1)
			return nil
		}
	}
	t.next++
	if err := t.Engine.subscribeHashed(id, t.next, f, k); err != nil {
		return fmt.Errorf("link routes: added filter: %w", err)
	}
	t.cache.count(t.Engine.filterOf(t.Engine.indexOf(id, t.next)), 1) // the pool's copy
	return nil
}

// remove takes out one copy of filter f link id holds: a repeat if it
// has any, else its engine entry.
func (t *LinkTable) remove(id ifaceID, f match.Filter) error {
	p := &t.Engine.pool
	s, ok := p.find(p.hash(f), f)
	var x match.ID
	if ok {
		x, ok = t.Engine.copyOn(s, id)
	}
	if !ok {
		return fmt.Errorf("link routes: removes %q, which the link does not hold", f)
	}
	t.cache.count(p.filter(s), -1)
	if ls := (linkSlot{id, s}); t.repeats[ls] > 0 {
		if t.repeats[ls]--; t.repeats[ls] == 0 {
			delete(t.repeats, ls)
		}
		return nil
	}
	if err := t.Engine.Unsubscribe(id, t.Engine.owner.at(x).sub); err != nil {
		return fmt.Errorf("link routes: remove %q: %w", f, err)
	}
	return nil
}

// Witnessed returns the ids of the filters link id holds by witness
// (wire.FilterHash), an id once per copy, for checks and diagnostics:
// built on each call.
func (t *LinkTable) Witnessed(id ifaceID) map[uint64][]uint64 {
	out := make(map[uint64][]uint64)
	st, ok := t.Engine.Ifaces[id]
	if !ok {
		return out
	}
	for sub, x := range st.subs.All() {
		w := t.witness(x)
		for range t.copies(id, x) {
			out[w] = append(out[w], sub)
		}
	}
	return out
}

// copies returns how many copies link id holds of index entry x's filter.
func (t *LinkTable) copies(id ifaceID, x match.ID) int {
	return 1 + t.repeats[linkSlot{id, t.Engine.owner.at(x).filter}]
}

// witness returns index entry x's witness: its pool slot's hash.
func (t *LinkTable) witness(x match.ID) uint64 {
	return t.Engine.pool.slots[t.Engine.owner.at(x).filter].hash
}

// Drop forgets a link's filters.
func (t *LinkTable) Drop(id ifaceID) {
	if st, ok := t.Engine.Ifaces[id]; ok {
		for _, x := range st.subs.All() {
			t.cache.count(t.Engine.filterOf(x), -t.copies(id, x))
		}
	}
	for ls := range t.repeats {
		if ls.link == id {
			delete(t.repeats, ls)
		}
	}
	t.cache.forget(id)
	t.Engine.Detach(id)
	t.listLinks()
}

// listLinks refreshes links.
func (t *LinkTable) listLinks() {
	t.links = t.links[:0]
	for id, st := range t.Engine.Ifaces {
		if st.Len() > 0 {
			t.links = append(t.links, id)
		}
	}
	slices.Sort(t.links)
}

// Route returns the links whose filters e matches, never the one it came
// from, in ascending id order, each with a witness for the next router
// (aliasing scratch space, valid until the next call), and what decided.
// witness, when not 0, names a filter the previous router found e to
// match, checked before it decides (see linkTable).
func (t *LinkTable) Route(from ifaceID, e match.Event, witness uint64) ([]LinkHit, RouteDecision) {
	t.out = t.out[:0]
	if len(t.links) == 0 || len(t.links) == 1 && t.links[0] == from {
		return nil, DecidedNoLinks // nowhere to go: a leaf of the tree
	}
	if witness != 0 {
		if t.resolve(from, e, witness) {
			t.Engine.maybeCompact() // counts the event, as the index path does
			return t.out, DecidedByWitness
		}
		t.out = t.out[:0]
	}
	key := t.cache.keyOf(e)
	if t.cache.excludes(&key) {
		t.Engine.maybeCompact()
		return nil, DecidedByCache
	}
	if t.fromCache(from, &key, e) {
		t.Engine.maybeCompact()
		return t.out, DecidedByCache
	}
	t.out = t.out[:0]
	for _, h := range t.Engine.Route(from, e) {
		st := t.Engine.Ifaces[h.Iface]
		x, _ := st.subs.Get(h.first)
		w := t.witness(x)
		t.out = append(t.out, LinkHit{Link: h.Iface, Witness: w})
		t.cache.remember(h.Iface, st.Len(), &key, t.Engine.filterOf(x), w)
	}
	return t.out, DecidedByIndex
}

// fromCache fills t.out with every link but from when the cache finds for
// each a filter e matches, and reports whether it did.
func (t *LinkTable) fromCache(from ifaceID, key *keyValue, e match.Event) bool {
	for _, id := range t.links {
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
	p := &t.Engine.pool
	found := false
	p.each(witness, func(s uint32) bool {
		t.out = t.out[:0]
		for _, id := range t.links {
			if id == from {
				continue
			}
			if _, ok := t.Engine.copyOn(s, id); !ok {
				return true
			}
			t.out = append(t.out, LinkHit{Link: id, Witness: witness})
		}
		found = p.filter(s).Matches(e) // last: the dearest test
		return !found
	})
	return found
}
