package core

import (
	"hash/maphash"
	"strings"

	"github.com/sift-pubsub/sift/match"
)

// linkCache lets the link table decide without its index when an event
// matches a filter that matched a recent event alike. The key attribute is
// the one most equality constraints of the link table name (symbol, in a
// table of stock filters); per link and per value of the key, the cache
// remembers one filter of the link that matched an event with that value.
// An event whose key value finds, for every link it could go to, a
// remembered filter it matches goes to those links, each checked exactly
// (Filter.Matches): the cache can only say "this link wants it", never
// "this one does not", so a miss costs a few comparisons and the index's
// answer as before. A link's entries go whenever its filters change; the
// entries are bounded per link (an event value outside every filter's
// equalities may come in, through a filter that does not constrain the
// key). A remembered key value owns its bytes: an event's string values
// alias the frame it was decoded from (wire.DecodeOwnedLinkPublish), which
// an entry must not keep alive.
//
// The cache also says "no link wants this" when it can prove it: when
// every filter of every link has an equality on the key, an event whose
// key is a string no filter's key equality names (or which lacks the key)
// matches none of them. That is the common case of topic traffic, where
// most events have a key value nobody subscribed to, and it costs one
// lookup instead of the positive lookup and the index's answer.
//
// The values named are counted by a seeded 32-bit hash, not by the
// string: the negative answer needs only "some filter may name it", and a
// hash that two values share (by chance, or forged: the seed is the
// process's own) can only keep an event from that answer, sending it to
// the index, which answers exactly. Keyed by the string, the counts were a
// 24-byte map slot per filter an upstream router holds (one distinct value
// each, on topic and symbol filters); by the hash, in a table of its own
// (valueCounts), an 8-byte word.
type linkCache struct {
	// seed is the cache's own seed of the hash the string values named
	// are counted by (valueHash); testHash, when set, replaces that hash
	// (tests make values collide).
	seed     maphash.Seed
	testHash func(string) uint32
	key      string // the key attribute ("" : no equality anywhere)
	stale    bool   // the equality counts changed since key was chosen
	byLink   map[ifaceID]map[match.Value]*cachedFilter
	// filters counts the filters counted (each distinct filter some link
	// holds, once however many links hold it: the answers are about which
	// filters are held, not how often); keyed
	// holds, per attribute named by some equality, what choosing the key
	// and the negative answer need.
	filters int
	keyed   map[string]*keyedFilters
	// kf is keyed[key] as of the last pick, the one with buckets.
	kf *keyedFilters
}

// keyedFilters is what the filters' equalities on one attribute say: how
// many equality constraints name it (the key is the attribute most
// name), how many filters have at least one, and the string values they
// name (per hash of a value, the filters naming a value of that hash; see
// linkCache).
type keyedFilters struct {
	eqs     int
	filters int
	strs    valueCounts
	// buckets count strs's hashes by their top bits (keybuckets.go),
	// kept for the key attribute's only (nil for the others).
	buckets *keyBuckets
}

// keyValue is the key value of the event being routed: ok when the event
// has one; owned when v is a copy (remember made it), no longer aliasing
// the event's frame.
type keyValue struct {
	v         match.Value
	ok, owned bool
}

// cachedFilter is a remembered filter and its witness.
type cachedFilter struct {
	f       match.Filter
	witness uint64
}

// cacheMin bounds a link's entries at cacheMin, or twice the link's
// filters when larger.
const cacheMin = 1024

func newLinkCache() *linkCache {
	return &linkCache{
		seed:   maphash.MakeSeed(),
		byLink: make(map[ifaceID]map[match.Value]*cachedFilter),
		keyed:  make(map[string]*keyedFilters),
	}
}

// count adds (delta > 0) or removes (delta < 0) a filter's equalities,
// delta times.
func (c *linkCache) count(f match.Filter, delta int) {
	c.filters += delta
	for i := range f.Len() {
		k := f.At(i)
		if k.Op != match.OpEq {
			continue
		}
		c.stale = true
		c.countKeyed(f, i, delta)
	}
}

// countKeyed counts equality i of f (delta copies) in its attribute's
// keyedFilters: its string value, and the filter once, at its first
// equality on that attribute.
func (c *linkCache) countKeyed(f match.Filter, i, delta int) {
	k := f.At(i)
	kf := c.keyed[k.Attr]
	if kf == nil {
		kf = &keyedFilters{}
		c.keyed[k.Attr] = kf
	}
	kf.eqs += delta
	if !hasEqBefore(f, i, k.Attr) {
		kf.filters += delta
	}
	if k.Val.Kind() == match.KindString {
		kf.countString(c.valueHash(k.Val.AsString()), delta)
	}
	if kf.eqs == 0 { // not at filters == 0: a filter's later equalities on k.Attr are still to come off
		delete(c.keyed, k.Attr)
	}
}

// countString adds delta copies of equalities naming a string of hash h,
// and keeps the buckets, if any, counting h while some copy names it.
func (kf *keyedFilters) countString(h uint32, delta int) {
	before, after := kf.strs.add(h, delta)
	if kf.buckets != nil && (before == 0) != (after == 0) {
		kf.buckets.add(h, min(max(after-before, -1), 1))
	}
}

// hasEqBefore reports whether f has an equality on attr before constraint i.
func hasEqBefore(f match.Filter, i int, attr string) bool {
	for j := range i {
		if k := f.At(j); k.Op == match.OpEq && k.Attr == attr {
			return true
		}
	}
	return false
}

// excludes reports whether no filter of any link can match an event of
// key k (from keyOf, which picks the key): every filter has an equality
// on the key, and the event lacks the key or has a string value none of
// them names. A value of another kind is never excluded (an int equals a
// Compare-equal float). Most strings no equality names are told by the
// bucket of their hash alone (keyBuckets), without a map lookup.
func (c *linkCache) excludes(k *keyValue) bool {
	kf := c.kf
	if kf == nil || kf.filters != c.filters {
		return false
	}
	if !k.ok {
		return true
	}
	if k.v.Kind() != match.KindString {
		return false
	}
	h := c.valueHash(k.v.AsString())
	return !kf.buckets.mayHold(h) || kf.strs.get(h) == 0
}

// valueHash is the hash keyedFilters counts a string value by: the two
// halves of its seeded maphash folded into one.
func (c *linkCache) valueHash(s string) uint32 {
	if c.testHash != nil {
		return c.testHash(s)
	}
	h := maphash.String(c.seed, s)
	return uint32(h>>32) ^ uint32(h)
}

// forget drops a link's entries (its filters changed).
func (c *linkCache) forget(id ifaceID) { delete(c.byLink, id) }

// pick chooses the key again if the equalities changed; a new key drops
// every entry. The key's keyedFilters (kf) get their buckets.
func (c *linkCache) pick() {
	if !c.stale {
		return
	}
	c.stale = false
	key, most := "", 0
	for a, kf := range c.keyed {
		n := kf.eqs
		if n > most || n == most && a < key {
			key, most = a, n
		}
	}
	if key != c.key {
		c.key = key
		clear(c.byLink)
	}
	kf := c.keyed[key]
	if c.kf != nil && c.kf != kf {
		c.kf.buckets = nil // no longer the key's
	}
	if kf != nil && kf.buckets == nil {
		kf.buckets = newKeyBuckets(&kf.strs)
	}
	c.kf = kf
}

// keyOf returns the event's key value, for lookup and remember.
func (c *linkCache) keyOf(e match.Event) keyValue {
	c.pick()
	if c.key == "" {
		return keyValue{}
	}
	v, ok := e.Get(c.key)
	return keyValue{v: v, ok: ok}
}

// lookup returns link id's remembered filter for key k if e matches it.
func (c *linkCache) lookup(id ifaceID, k *keyValue, e match.Event) (cachedFilter, bool) {
	if !k.ok {
		return cachedFilter{}, false
	}
	cf := c.byLink[id][k.v]
	if cf == nil || !cf.f.Matches(e) {
		return cachedFilter{}, false
	}
	return *cf, true
}

// remember records that an event with key k matched filter f of link id,
// which holds held filters.
func (c *linkCache) remember(id ifaceID, held int, k *keyValue, f match.Filter, witness uint64) {
	if !k.ok {
		return
	}
	m := c.byLink[id]
	if m == nil {
		m = make(map[match.Value]*cachedFilter)
		c.byLink[id] = m
	}
	if cf := m[k.v]; cf != nil {
		*cf = cachedFilter{f: f, witness: witness} // in place: assigning m[k.v] would store k.v's string as the key
		return
	}
	if len(m) >= max(cacheMin, 2*held) {
		clear(m)
	}
	if !k.owned { // copied once per event, whatever the links it hits
		k.v, k.owned = owned(k.v), true
	}
	m[k.v] = &cachedFilter{f: f, witness: witness}
}

// owned returns v with its own copy of a string value.
func owned(v match.Value) match.Value {
	if v.Kind() == match.KindString {
		return match.Str(strings.Clone(v.AsString()))
	}
	return v
}
