package core

import (
	"hash/maphash"

	"github.com/sift-pubsub/sift/match"
)

// filterPool shares one copy of each distinct filter among the engine's
// subscriptions to it. Why: deployments with very many subscriptions
// repeat filters (many clients want the same symbol, the same range), and
// a parsed filter costs more than the index entry and the routing state
// of its subscription together; a subscription to a filter already held
// then costs the pool nothing but a reference count.
//
// Filters are immutable values, so sharing is safe; the pool only decides
// which copy a new subscription keeps. It is keyed by a hash of the
// constraints: two distinct filters with the same hash (a 64-bit
// collision) are simply not shared, and a reference count that goes
// astray through one only loses sharing later, never a filter.
type filterPool struct {
	seed   maphash.Seed
	byHash map[uint64]pooledFilter
}

type pooledFilter struct {
	f    match.Filter
	refs uint32
}

func newFilterPool() filterPool {
	return filterPool{seed: maphash.MakeSeed(), byHash: make(map[uint64]pooledFilter)}
}

func (p *filterPool) hash(f match.Filter) uint64 {
	var h maphash.Hash
	h.SetSeed(p.seed)
	for i := range f.Len() {
		maphash.WriteComparable(&h, f.At(i))
	}
	return h.Sum64()
}

// intern returns the pool's copy of f (f itself when it is the first),
// counting one more reference to it.
func (p *filterPool) intern(f match.Filter) match.Filter {
	k := p.hash(f)
	e, ok := p.byHash[k]
	switch {
	case !ok:
		p.byHash[k] = pooledFilter{f: f, refs: 1}
		return f
	case e.f.Equal(f) && e.refs < ^uint32(0):
		e.refs++
		p.byHash[k] = e
		return e.f
	}
	return f // a collision, or a count at its bound: not shared
}

// release drops one reference to f, a filter intern returned.
func (p *filterPool) release(f match.Filter) {
	k := p.hash(f)
	e, ok := p.byHash[k]
	if !ok || !e.f.Equal(f) {
		return
	}
	if e.refs--; e.refs == 0 {
		delete(p.byHash, k)
		return
	}
	p.byHash[k] = e
}

// len returns the distinct filters held.
func (p *filterPool) len() int { return len(p.byHash) }
