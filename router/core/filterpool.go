package core

import (
	"hash/maphash"
	"slices"

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
// found by a hash of their constraints (or the pool's own hash function:
// the link table's pool hashes by witness, wire.FilterHash, so that a
// slot's hash is the witness of its filter); two distinct filters with the
// same hash (a 64-bit collision, or filters a neighbour forged to collide)
// each get a slot of their own, the later listed in a side table that is
// empty but for collisions. Reference counts are per slot, so they are
// exact.
type filterPool struct {
	seed     maphash.Seed
	hashFn   func(match.Filter) uint64 // nil: maphash of the constraints
	byHash   slotIndex                 // the first slot of each hash
	collided map[uint64][]uint32       // the other slots of a hash, if any
	slots    []pooledFilter            // slot 0 is never used
	free     []uint32
}

// pooledFilter is one slot: a filter, its hash and references, and (in an
// engine that lists copies, see Engine.copies) the first index entry
// holding it, or (in the link table's pool) the first link holding it, in
// the padding a uint32 would leave anyway.
type pooledFilter struct {
	f    match.Filter
	hash uint64
	refs uint32 // 0: a free slot
	head uint32 // first entry or link holding the slot (0: none, or not listed)
}

func newFilterPool() filterPool {
	return filterPool{seed: maphash.MakeSeed(), byHash: newSlotIndex(), slots: make([]pooledFilter, 1)}
}

func (p *filterPool) hash(f match.Filter) uint64 {
	if p.hashFn != nil {
		return p.hashFn(f)
	}
	var h maphash.Hash
	h.SetSeed(p.seed)
	for i := range f.Len() {
		maphash.WriteComparable(&h, f.At(i))
	}
	return h.Sum64()
}

// intern returns the slot holding f, with one more reference: the shared
// slot of an equal filter, or a new slot holding f itself.
func (p *filterPool) intern(f match.Filter) uint32 { return p.internHashed(p.hash(f), f) }

// internHashed is intern of f, whose hash is k.
func (p *filterPool) internHashed(k uint64, f match.Filter) uint32 {
	if s, ok := p.find(k, f); ok && p.slots[s].refs < ^uint32(0) {
		p.slots[s].refs++
		return s
	}
	s := p.newSlot(pooledFilter{f: f, hash: k, refs: 1})
	if _, taken := p.byHash.get(k, p.slots); !taken {
		p.byHash.put(s, p.slots)
	} else {
		if p.collided == nil {
			p.collided = make(map[uint64][]uint32)
		}
		p.collided[k] = append(p.collided[k], s)
	}
	return s
}

// find returns the slot holding a filter equal to f, whose hash is k.
func (p *filterPool) find(k uint64, f match.Filter) (uint32, bool) {
	var found uint32
	p.each(k, func(s uint32) bool {
		if p.slots[s].f.Equal(f) {
			found = s
			return false
		}
		return true
	})
	return found, found != 0
}

// each calls fn on every slot whose hash is k, until fn returns false.
func (p *filterPool) each(k uint64, fn func(uint32) bool) {
	if s, ok := p.byHash.get(k, p.slots); ok && !fn(s) {
		return
	}
	for _, s := range p.collided[k] {
		if !fn(s) {
			return
		}
	}
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
	if s0, ok := p.byHash.get(e.hash, p.slots); ok && s0 == s {
		p.byHash.remove(s, p.slots)
	} else if c := p.collided[e.hash]; len(c) > 0 {
		if c = slices.DeleteFunc(c, func(x uint32) bool { return x == s }); len(c) > 0 {
			p.collided[e.hash] = c
		} else {
			delete(p.collided, e.hash)
		}
	}
	*e = pooledFilter{}
	p.free = append(p.free, s)
}

// len returns the distinct filters held (slots in use).
func (p *filterPool) len() int { return len(p.slots) - 1 - len(p.free) }
