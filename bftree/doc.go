// Package bftree implements the bftree of the seed (Tarkoma's report,
// after Jerzak and Fetzer): a tree of fixed height h+1 storing
// subscription Bloom filters of m bits, each split into h parts of m/h
// bits and inserted as a path from an imaginary root, identical children
// shared; the leaf holds the subscription sources with reference counts,
// so delete works. Matching splits the event summary the same way and
// searches depth first, following a child when e_i AND s_i == s_i.
//
// Tree implements bloom.Tree; NewIndex wraps it as an exact match.Index
// (registered as "bftree") through bloom.Index, which re-checks every
// candidate with its exact filter and reports raw candidates and
// false-positive counts.
//
// Caveats: the tree's size grows with m and h (a wide root when the first
// part is diverse); part widths need not be whole words, but whole words
// (m/h a multiple of 64) are the fast case. Not safe for concurrent use.
package bftree
