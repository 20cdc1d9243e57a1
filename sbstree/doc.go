// Package sbstree implements the sbstree, the sparse variant of the
// bftree: a subscription Bloom filter is the ascending list of its set bit
// positions, inserted as a trie path whose nodes each stand for one set
// bit; the node where a list ends holds the subscription sources with
// reference counts. Matching walks depth first and follows a child only if
// its bit is set in the event summary. Unbranched runs of nodes are
// stored as one node with an array of bits (path compression), so most of
// a filter's path costs one node.
//
// Children are sorted arrays of bit positions beside their node pointers:
// the universe is at most 65,536 bits, so a roaring bitmap would be one
// container, that is, the same sorted array with more overhead; testing a
// child's bit in the dense summary is a single word probe. A node with
// many children (the root has one per distinct lowest bit) also keeps
// them as a bitmap, ANDed with the summary a word at a time.
//
// Tree implements bloom.Tree; NewIndex wraps it as an exact match.Index
// (registered as "sbstree") through bloom.Index. Sparse storage pays off
// while filters are a few percent full. Not safe for concurrent use.
package sbstree
