package bloomfwd

import (
	"fmt"
	"slices"

	"github.com/bits-and-blooms/bitset"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Deciding by witness. Along a chain, an inner router's next link holds
// the very filters the link behind it forwarded, and the first router
// (which matches exactly) knows a filter of them that the event matches:
// its witness, the filter's hash, as exact mode sends in link-publish.
// A held filter whose Bloom filter the summary contains is exactly what
// the tree walk looks for, so checking the witnessed filter first (one
// map lookup and an AND over the summary's words) gives the walk's answer
// whenever it is contained, and the walk decides otherwise: the witness
// saves the walk, never changes where an event goes. The walk grows with
// the filters a link holds (it explores every branch the summary's bits
// allow before it reaches a stored filter); the check does not.

// RouteWitness is Route for an event that came with witness (0: none):
// the same links, deciding each link that holds the witnessed filter,
// when the summary contains it, without walking its tree. It also says
// how it decided.
func (t *Trees) RouteWitness(summary []uint64, from mesh.Link, witness uint64, dst []mesh.Link) ([]mesh.Link, Decided, error) {
	var d Decided
	w := t.e.Words()
	if len(summary) != len(w) {
		return dst, d, fmt.Errorf("bloom summary of %d bits, want %d", 64*len(summary), 64*len(w))
	}
	copied := false
	for _, l := range t.order {
		if l == from {
			continue
		}
		lt := t.links[l]
		if witness != 0 && lt.witnessed(summary, witness) {
			dst = append(dst, l)
			d.Witness++
			continue
		}
		if !copied {
			copy(w, summary)
			copied = true
		}
		d.Walks++
		if lt.matchAny(t.e) {
			dst = append(dst, l)
		}
	}
	return dst, d, nil
}

// Decided says how RouteWitness decided an event's links: Witness links by
// the witness, Walks by walking their tree.
type Decided struct {
	Witness, Walks int
}

// witnessed reports whether the link holds a filter with witness w that
// summary contains.
func (lt *linkTree) witnessed(summary []uint64, w uint64) bool {
	for _, h := range lt.byWitness[w] {
		if bloom.ContainsWords(summary, h.bits.Words()) {
			return true
		}
	}
	return false
}

// find returns the held filter equal to f, or nil.
func (lt *linkTree) find(f match.Filter) *heldFilter {
	for _, h := range lt.byWitness[wire.FilterHash(f.String())] {
		if h.f.Equal(f) {
			return h
		}
	}
	return nil
}

// hold starts holding f, not held yet, with its Bloom filter bits (no
// copy yet: the caller counts them).
func (lt *linkTree) hold(f match.Filter, bits *bitset.BitSet) *heldFilter {
	h := &heldFilter{f: f, bits: bits}
	w := wire.FilterHash(f.String())
	lt.byWitness[w] = append(lt.byWitness[w], h)
	return h
}

// drop forgets a filter the link no longer holds.
func (lt *linkTree) drop(h *heldFilter) {
	w := wire.FilterHash(h.f.String())
	hs := slices.DeleteFunc(lt.byWitness[w], func(x *heldFilter) bool { return x == h })
	if len(hs) == 0 {
		delete(lt.byWitness, w)
		return
	}
	lt.byWitness[w] = hs
}
