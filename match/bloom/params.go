package bloom

import (
	"encoding/binary"
	"fmt"

	bbloom "github.com/bits-and-blooms/bloom/v3"
)

// HashFamily names the hash functions every router must share: murmur3
// 128-bit double hashing as in github.com/bits-and-blooms/bloom/v3, applied
// to the 16 bytes seed||key (both big-endian), reduced modulo M.
const HashFamily = "bloom/v3-murmur3-double"

// Defaults of Params, chosen by the sweep in notes/issue-4.md.
const (
	DefaultM = 1024
	DefaultK = 3
)

// MaxM bounds M so that bit positions fit in a uint32 and a summary stays a
// packet-sized header.
const MaxM = 1 << 16

// Params are the Bloom parameters every router of a network must agree on
// (they travel in `hello`). A zero field takes the default written beside
// it, so Params{} is the default encoding.
type Params struct {
	// M is the number of bits of every filter and summary, a multiple of
	// 64 in [64, MaxM] (default DefaultM).
	M uint
	// K is the number of bits set per dictionary term (default DefaultK).
	K uint
	// Seed is mixed into every hash (default 0).
	Seed uint64
	// Flat keys every constraint on its own. The default (false) qualifies
	// each non-equality constraint of a filter by the filter's first
	// equality constraint (see Terms), which keeps summaries sparse when
	// many filters constrain one attribute under different equalities.
	Flat bool
}

// Resolved returns p with every zero field set to its default.
func (p Params) Resolved() Params {
	if p.M == 0 {
		p.M = DefaultM
	}
	if p.K == 0 {
		p.K = DefaultK
	}
	return p
}

// Validate reports why the (resolved) parameters are unusable, or nil.
func (p Params) Validate() error {
	p = p.Resolved()
	switch {
	case p.M%64 != 0 || p.M < 64 || p.M > MaxM:
		return fmt.Errorf("bloom: m = %d is not a multiple of 64 in [64, %d]", p.M, MaxM)
	case p.K > 64:
		return fmt.Errorf("bloom: k = %d is above 64", p.K)
	}
	return nil
}

// Compatible reports, as an error naming both values, why two routers with
// parameters p and q cannot exchange summaries, or nil when they can.
func (p Params) Compatible(q Params) error {
	p, q = p.Resolved(), q.Resolved()
	if p != q {
		return fmt.Errorf("bloom parameters differ: %v (%s) against %v (%s)", p, HashFamily, q, HashFamily)
	}
	return nil
}

// String renders the parameters as `m=1024 k=3 seed=0 terms=qualified`.
func (p Params) String() string {
	terms := "qualified"
	if p.Flat {
		terms = "flat"
	}
	return fmt.Sprintf("m=%d k=%d seed=%d terms=%s", p.M, p.K, p.Seed, terms)
}

// words returns the number of 64-bit words of a filter.
func (p Params) words() int { return int(p.M / 64) }

// positions appends the K bit positions of a term key to dst.
func (p Params) positions(key uint64, dst []uint32) []uint32 {
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], p.Seed)
	binary.BigEndian.PutUint64(buf[8:], key)
	for _, loc := range bbloom.Locations(buf[:], p.K) {
		dst = append(dst, uint32(loc%uint64(p.M)))
	}
	return dst
}
