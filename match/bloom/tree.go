package bloom

import "github.com/bits-and-blooms/bitset"

// Tree stores subscription Bloom filters with their sources and finds the
// ones a summary contains. bftree and sbstree implement it.
type Tree interface {
	// Insert stores filter s (of the tree's M bits) for src; storing the
	// same (s, src) again adds a reference.
	Insert(s *bitset.BitSet, src uint64)
	// Delete drops one reference to (s, src), and fails, changing nothing,
	// when the pair is not stored.
	Delete(s *bitset.BitSet, src uint64) error
	// Match appends to dst the sources of every stored filter s with
	// e AND s == s: each source once per distinct stored filter it holds.
	Match(e *bitset.BitSet, dst []uint64) []uint64
	// Len returns the number of stored (filter, source) references.
	Len() int
	// Nodes returns the number of tree nodes, a measure of its size.
	Nodes() int
}
