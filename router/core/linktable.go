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
// does. Only a collision of two held filters' hashes can then send an
// event to a link that does not want it; nothing ever loses one.
type LinkTable struct {
	Engine *Engine
	next   uint64
	// links lists the links with at least one filter, ascending.
	links []ifaceID
	// hashOf[id] is the witness (wire.FilterHash) of filter id;
	// holders[w] the filter with witness w and the copies of it the links
	// hold: one map for the witness path and for finding a link's copy of
	// a filter, rather than a second map per link.
	hashOf  map[uint64]uint64
	holders map[uint64]*witnessed
	cache   *linkCache
	out     []LinkHit
}

// witnessed is a filter a witness names and the copies held under the
// witness: links[i] holds the copy whose id is subs[i], a link once per
// copy. A copy may be of another filter whose witness collides with f's.
type witnessed struct {
	f     match.Filter
	links []ifaceID
	subs  []uint64
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
	DecidedByCache                        // filters that matched events alike
	DecidedNoLinks                        // no link but the event's own holds a filter
	NumDecisions
)

func NewLinkTable() *LinkTable {
	eng := NewEngine(match.NewFast(match.FastConfig{}), 0)
	eng.ifacesOnly = true
	return &LinkTable{
		Engine:  eng,
		hashOf:  make(map[uint64]uint64),
		holders: make(map[uint64]*witnessed),
		cache:   newLinkCache(),
	}
}

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

// add installs one copy of f for link id.
func (t *LinkTable) add(id ifaceID, f match.Filter) error {
	t.next++
	if err := t.Engine.SubscribeFilter(id, t.next, f); err != nil {
		return fmt.Errorf("link routes: added filter: %w", err)
	}
	f = t.Engine.filterOf(t.Engine.indexOf(id, t.next)) // the pool's copy
	t.cache.count(f, 1)
	w := wire.FilterHash(f.String())
	t.hashOf[t.next] = w
	wd := t.holders[w]
	if wd == nil {
		wd = &witnessed{f: f}
		t.holders[w] = wd
	}
	wd.links = append(wd.links, id)
	wd.subs = append(wd.subs, t.next)
	return nil
}

// remove takes out one copy of filter f link id holds: the last one
// installed among those whose witness is f's and that equal f (two
// filters' witnesses may collide).
func (t *LinkTable) remove(id ifaceID, f match.Filter) error {
	w := wire.FilterHash(f.String())
	wd := t.holders[w]
	i := -1
	if wd != nil {
		i = len(wd.subs) - 1
	}
	for i >= 0 && (wd.links[i] != id || !t.Engine.filterOf(t.Engine.indexOf(id, wd.subs[i])).Equal(f)) {
		i--
	}
	if i < 0 {
		return fmt.Errorf("link routes: removes %q, which the link does not hold", f)
	}
	sub := wd.subs[i]
	t.cache.count(t.Engine.filterOf(t.Engine.indexOf(id, sub)), -1)
	if err := t.Engine.Unsubscribe(id, sub); err != nil {
		return fmt.Errorf("link routes: remove %q: %w", f, err)
	}
	t.forgetAt(w, wd, i)
	return nil
}

// forget drops filter sub of link id from the witnesses.
func (t *LinkTable) forget(id ifaceID, sub uint64) {
	w := t.hashOf[sub]
	wd := t.holders[w]
	for i := range wd.subs {
		if wd.subs[i] == sub && wd.links[i] == id {
			t.forgetAt(w, wd, i)
			return
		}
	}
}

// forgetAt drops the copy wd holds at i (under witness w).
func (t *LinkTable) forgetAt(w uint64, wd *witnessed, i int) {
	delete(t.hashOf, wd.subs[i])
	wd.links = slices.Delete(wd.links, i, i+1)
	wd.subs = slices.Delete(wd.subs, i, i+1)
	if len(wd.links) == 0 {
		delete(t.holders, w)
	}
}

// Witnessed returns the ids of the filters link id holds by witness
// (wire.FilterHash), for checks and diagnostics: built on each call.
func (t *LinkTable) Witnessed(id ifaceID) map[uint64][]uint64 {
	out := make(map[uint64][]uint64)
	for w, wd := range t.holders {
		for i, l := range wd.links {
			if l == id {
				out[w] = append(out[w], wd.subs[i])
			}
		}
	}
	return out
}

// Drop forgets a link's filters.
func (t *LinkTable) Drop(id ifaceID) {
	for sub, f := range t.Engine.Subs(id) {
		t.cache.count(f, -1)
		t.forget(id, sub)
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
	if t.fromCache(from, &key, e) {
		t.Engine.maybeCompact()
		return t.out, DecidedByCache
	}
	t.out = t.out[:0]
	for _, h := range t.Engine.Route(from, e) {
		st := t.Engine.Ifaces[h.Iface]
		w := t.hashOf[h.first]
		t.out = append(t.out, LinkHit{Link: h.Iface, Witness: w})
		t.cache.remember(h.Iface, st.Len(), &key, t.Engine.filterOf(t.Engine.indexOf(h.Iface, h.first)), w)
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
// whether it did.
func (t *LinkTable) resolve(from ifaceID, e match.Event, witness uint64) bool {
	wd := t.holders[witness]
	if wd == nil {
		return false
	}
	for _, id := range t.links {
		if id == from {
			continue
		}
		if !slices.Contains(wd.links, id) {
			return false
		}
		t.out = append(t.out, LinkHit{Link: id, Witness: witness})
	}
	return wd.f.Matches(e) // last: the dearest test
}
