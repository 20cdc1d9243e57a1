package router

import (
	"fmt"
	"slices"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// linkTable mirrors, per router link, the filters the neighbour sent
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
type linkTable struct {
	eng  *engine
	subs map[ifaceID]map[string][]uint64 // canonical filter text → ids
	next uint64
	// links lists the links with at least one filter, ascending.
	links []ifaceID
	// hashOf[id] is the witness (wire.FilterHash) of filter id;
	// holders[w] the filter with witness w and the links holding it.
	hashOf  map[uint64]uint64
	holders map[uint64]*witnessed
	cache   *linkCache
	out     []linkHit
}

// witnessed is a filter a witness names and the links holding it, a link
// once per copy it holds.
type witnessed struct {
	f     match.Filter
	links []ifaceID
}

// linkHit is a link an event goes to, with the witness to send along: a
// filter of the link's the event matches (0: none known).
type linkHit struct {
	link    ifaceID
	witness uint64
}

// routeDecision says what decided route's answer.
type routeDecision uint8

const (
	decidedByIndex   routeDecision = iota // the index matched the event
	decidedByWitness                      // the witness that came with it
	decidedByCache                        // filters that matched events alike
	decidedNoLinks                        // no link but the event's own holds a filter
	numDecisions
)

func newLinkTable() *linkTable {
	eng := newEngine(match.NewFast(match.FastConfig{}), 0)
	eng.ifacesOnly = true
	return &linkTable{
		eng:     eng,
		subs:    make(map[ifaceID]map[string][]uint64),
		hashOf:  make(map[uint64]uint64),
		holders: make(map[uint64]*witnessed),
		cache:   newLinkCache(),
	}
}

// apply carries out an accepted Routes message from link id: a snapshot
// replaces what the link holds, an incremental one removes, then adds.
func (t *linkTable) apply(id ifaceID, r *wire.Routes) error {
	defer t.listLinks()
	defer t.cache.forget(id)
	if r.Snapshot {
		t.drop(id)
	}
	held, ok := t.subs[id]
	if !ok {
		if err := t.eng.attach(id, kindNeighbour); err != nil {
			return err
		}
		held = make(map[string][]uint64)
		t.subs[id] = held
	}
	for _, text := range r.Remove {
		if err := t.remove(id, held, text); err != nil {
			return err
		}
	}
	for _, text := range r.Add {
		t.next++
		if err := t.eng.subscribe(id, t.next, text); err != nil {
			return fmt.Errorf("link routes: added filter: %w", err)
		}
		f := t.eng.ifaces[id].subs[t.next].filter
		t.cache.count(f, 1)
		key := f.String()
		held[key] = append(held[key], t.next)
		w := wire.FilterHash(key)
		t.hashOf[t.next] = w
		wd := t.holders[w]
		if wd == nil {
			wd = &witnessed{f: f}
			t.holders[w] = wd
		}
		wd.links = append(wd.links, id)
	}
	return nil
}

// remove takes out one copy of a filter link id holds.
func (t *linkTable) remove(id ifaceID, held map[string][]uint64, text string) error {
	f, err := match.Parse(text)
	if err != nil {
		return fmt.Errorf("link routes: removed filter: %w", err)
	}
	key := f.String()
	ids := held[key]
	if len(ids) == 0 {
		return fmt.Errorf("link routes: removes %q, which the link does not hold", key)
	}
	sub := ids[len(ids)-1]
	t.cache.count(t.eng.ifaces[id].subs[sub].filter, -1)
	if err := t.eng.unsubscribe(id, sub); err != nil {
		return err
	}
	if held[key] = ids[:len(ids)-1]; len(held[key]) == 0 {
		delete(held, key)
	}
	t.forget(id, sub)
	return nil
}

// forget drops filter sub of link id from the witnesses.
func (t *linkTable) forget(id ifaceID, sub uint64) {
	w := t.hashOf[sub]
	delete(t.hashOf, sub)
	wd := t.holders[w]
	if i := slices.Index(wd.links, id); i >= 0 {
		wd.links = slices.Delete(wd.links, i, i+1)
	}
	if len(wd.links) == 0 {
		delete(t.holders, w)
	}
}

// drop forgets a link's filters.
func (t *linkTable) drop(id ifaceID) {
	for _, ids := range t.subs[id] {
		for _, sub := range ids {
			t.cache.count(t.eng.ifaces[id].subs[sub].filter, -1)
			t.forget(id, sub)
		}
	}
	t.cache.forget(id)
	t.eng.detach(id)
	delete(t.subs, id)
	t.listLinks()
}

// listLinks refreshes links.
func (t *linkTable) listLinks() {
	t.links = t.links[:0]
	for id, held := range t.subs {
		if len(held) > 0 {
			t.links = append(t.links, id)
		}
	}
	slices.Sort(t.links)
}

// route returns the links whose filters e matches, never the one it came
// from, in ascending id order, each with a witness for the next router
// (aliasing scratch space, valid until the next call), and what decided.
// witness, when not 0, names a filter the previous router found e to
// match, checked before it decides (see linkTable).
func (t *linkTable) route(from ifaceID, e match.Event, witness uint64) ([]linkHit, routeDecision) {
	t.out = t.out[:0]
	if len(t.links) == 0 || len(t.links) == 1 && t.links[0] == from {
		return nil, decidedNoLinks // nowhere to go: a leaf of the tree
	}
	if witness != 0 {
		if t.resolve(from, e, witness) {
			t.eng.maybeCompact() // counts the event, as the index path does
			return t.out, decidedByWitness
		}
		t.out = t.out[:0]
	}
	key := t.cache.keyOf(e)
	if t.fromCache(from, &key, e) {
		t.eng.maybeCompact()
		return t.out, decidedByCache
	}
	t.out = t.out[:0]
	for _, h := range t.eng.route(from, e) {
		st := t.eng.ifaces[h.iface]
		w := t.hashOf[h.first]
		t.out = append(t.out, linkHit{link: h.iface, witness: w})
		t.cache.remember(h.iface, len(st.subs), &key, st.subs[h.first].filter, w)
	}
	return t.out, decidedByIndex
}

// fromCache fills t.out with every link but from when the cache finds for
// each a filter e matches, and reports whether it did.
func (t *linkTable) fromCache(from ifaceID, key *keyValue, e match.Event) bool {
	for _, id := range t.links {
		if id == from {
			continue
		}
		cf, ok := t.cache.lookup(id, key, e)
		if !ok {
			return false
		}
		t.out = append(t.out, linkHit{link: id, witness: cf.witness})
	}
	return true
}

// resolve fills t.out with every link but from when each holds the
// witnessed filter and e matches it, passing the witness on, and reports
// whether it did.
func (t *linkTable) resolve(from ifaceID, e match.Event, witness uint64) bool {
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
		t.out = append(t.out, linkHit{link: id, witness: witness})
	}
	return wd.f.Matches(e) // last: the dearest test
}
