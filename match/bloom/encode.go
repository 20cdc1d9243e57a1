package bloom

import (
	"math"
	"math/bits"

	"github.com/bits-and-blooms/bitset"
	"github.com/sift-pubsub/sift/match"
)

// NewFilter returns an all-zero filter of p.M bits.
func (p Params) NewFilter() *bitset.BitSet {
	p = p.Resolved()
	return bitset.From(make([]uint64, p.words()))
}

// Encode returns a subscription's Bloom filter: the union of the K bit
// positions of each of its terms. The empty filter encodes to all zeros,
// which every summary contains.
func (p Params) Encode(f match.Filter) *bitset.BitSet {
	p = p.Resolved()
	b := p.NewFilter()
	var pos []uint32
	for _, t := range p.Terms(f) {
		pos = p.positions(t.Key(), pos[:0])
		setPositions(b.Words(), pos)
	}
	return b
}

// AddKey sets the K bit positions of key in b, a filter of p.M bits.
func (p Params) AddKey(b *bitset.BitSet, key uint64) {
	p = p.Resolved()
	setPositions(b.Words(), p.positions(key, nil))
}

// TestKey reports whether all K bit positions of key are set in b.
func (p Params) TestKey(b *bitset.BitSet, key uint64) bool {
	p = p.Resolved()
	w := b.Words()
	for _, x := range p.positions(key, nil) {
		if w[x>>6]&(1<<(x&63)) == 0 {
			return false
		}
	}
	return true
}

// Contains is the Bloom matching test: the event summary e contains the
// subscription filter s when e AND s == s.
func Contains(e, s *bitset.BitSet) bool { return ContainsWords(e.Words(), s.Words()) }

// ContainsWords is Contains on raw words of equal length.
func ContainsWords(e, s []uint64) bool {
	for i, w := range s {
		if w&^e[i] != 0 {
			return false
		}
	}
	return true
}

// Fill returns the fraction of bits set in b.
func Fill(b *bitset.BitSet) float64 {
	n := 0
	for _, w := range b.Words() {
		n += bits.OnesCount64(w)
	}
	return float64(n) / float64(len(b.Words())*64)
}

// ExpectedFPRate is the textbook false-positive rate of a Bloom filter of
// m bits with k hashes after n insertions: (1 - e^(-kn/m))^k.
func ExpectedFPRate(m, k, n uint) float64 {
	return math.Pow(1-math.Exp(-float64(k)*float64(n)/float64(m)), float64(k))
}

func setPositions(w []uint64, pos []uint32) {
	for _, x := range pos {
		w[x>>6] |= 1 << (x & 63)
	}
}

func orWords(dst, src []uint64) {
	for i, w := range src {
		dst[i] |= w
	}
}
