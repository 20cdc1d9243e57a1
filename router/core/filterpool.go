package core

import (
	"hash/maphash"

	"github.com/sift-pubsub/sift/match"
)

// filterPool holds the engine's subscriptions' filters, one copy of each
// distinct filter shared by the subscriptions to it, in dense slots named
// by a uint32 (what a subscription keeps, instead of a filter header).
// Why: deployments with very many subscriptions repeat filters (many
// clients want the same symbol, the same range), and a parsed filter
// costs more than the index entry and the routing state of its
// subscription together; a subscription to a filter already held then
// costs the pool nothing but a reference.
//
// Filters are immutable values, so sharing is safe. Equal filters are
// found by a hash of their constraints; two distinct filters with the
// same hash (a 64-bit collision) each get a slot of their own, the later
// not shared. Reference counts are per slot, so they are exact.
type filterPool struct {
	seed   maphash.Seed
	byHash map[uint64]uint32 // the shared slot of each hash
	slots  []pooledFilter    // slot 0 is never used
	free   []uint32
}

type pooledFilter struct {
	f    match.Filter
	hash uint64
	refs uint32 // 0: a free slot
}

func newFilterPool() filterPool {
	return filterPool{seed: maphash.MakeSeed(), byHash: make(map[uint64]uint32), slots: make([]pooledFilter, 1)}
}

func (p *filterPool) hash(f match.Filter) uint64 {
	var h maphash.Hash
	h.SetSeed(p.seed)
	for i := range f.Len() {
		maphash.WriteComparable(&h, f.At(i))
	}
	return h.Sum64()
}

// intern returns the slot holding f, with one more reference: the shared
// slot of an equal filter, or a new slot holding f itself.
func (p *filterPool) intern(f match.Filter) uint32 {
	k := p.hash(f)
	s, shared := p.byHash[k]
	if shared && p.slots[s].f.Equal(f) && p.slots[s].refs < ^uint32(0) {
		p.slots[s].refs++
		return s
	}
	s = p.newSlot(pooledFilter{f: f, hash: k, refs: 1})
	if !shared {
		p.byHash[k] = s
	}
	return s
}

func (p *filterPool) newSlot(e pooledFilter) uint32 {
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free = p.free[:n-1]
		p.slots[s] = e
		return s
	}
	p.slots = append(p.slots, e)
	return uint32(len(p.slots) - 1)
}

// filter returns slot s's filter.
func (p *filterPool) filter(s uint32) match.Filter { return p.slots[s].f }

// release drops one reference to slot s; the last frees it.
func (p *filterPool) release(s uint32) {
	e := &p.slots[s]
	if e.refs--; e.refs > 0 {
		return
	}
	if p.byHash[e.hash] == s {
		delete(p.byHash, e.hash)
	}
	*e = pooledFilter{}
	p.free = append(p.free, s)
}

// len returns the distinct filters held (slots in use).
func (p *filterPool) len() int { return len(p.slots) - 1 - len(p.free) }
