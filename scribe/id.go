package scribe

import (
	"encoding/hex"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"
)

// ID is a node or group identifier of up to 128 bits. It is stored
// left-aligned: bit 127 (the top bit of Hi) is the most significant bit of the
// id whatever its width, so prefix, ordering and ring arithmetic on the full
// 128 bits agree with those on the id's own width. The zero value is id 0.
type ID struct{ Hi, Lo uint64 }

// Less reports whether a is numerically smaller than b.
func (a ID) Less(b ID) bool { return a.Hi < b.Hi || (a.Hi == b.Hi && a.Lo < b.Lo) }

// Sub returns a-b modulo 2^128: the clockwise distance from b to a on the ring.
func (a ID) Sub(b ID) ID {
	lo, borrow := bits.Sub64(a.Lo, b.Lo, 0)
	hi, _ := bits.Sub64(a.Hi, b.Hi, borrow)
	return ID{hi, lo}
}

// Add returns a+b modulo 2^128.
func (a ID) Add(b ID) ID {
	lo, carry := bits.Add64(a.Lo, b.Lo, 0)
	hi, _ := bits.Add64(a.Hi, b.Hi, carry)
	return ID{hi, lo}
}

// Dist is the numerical distance between a and b on the ring: the smaller of
// the clockwise and counter-clockwise distances.
func Dist(a, b ID) ID {
	d, e := a.Sub(b), b.Sub(a)
	if e.Less(d) {
		return e
	}
	return d
}

// Closer reports whether a is numerically closer to key than b, breaking ties
// in favour of the smaller id so that "the closest node" is always unique.
func Closer(key, a, b ID) bool {
	da, db := Dist(a, key), Dist(b, key)
	if da != db {
		return da.Less(db)
	}
	return a.Less(b)
}

// Space fixes the geometry of an id space: Bits is the id width and B the
// number of bits per digit (ids are read as Bits/B digits of base 2^B).
type Space struct {
	Bits int
	B    int
}

// Validate reports whether the space is usable.
func (s Space) Validate() error {
	switch {
	case s.Bits < 4 || s.Bits > 128:
		return fmt.Errorf("id width %d bits: want 4..128", s.Bits)
	case s.B < 1 || s.B > 8:
		return fmt.Errorf("digit width b=%d: want 1..8", s.B)
	case s.Bits%s.B != 0:
		return fmt.Errorf("id width %d is not a multiple of b=%d", s.Bits, s.B)
	}
	return nil
}

// Digits is the number of base-2^B digits in an id.
func (s Space) Digits() int { return s.Bits / s.B }

// Cols is the number of digit values, 2^B.
func (s Space) Cols() int { return 1 << s.B }

// Digit returns digit i of id (digit 0 is the most significant).
func (s Space) Digit(id ID, i int) int {
	return int(shr(id, 128-(i+1)*s.B).Lo & uint64(s.Cols()-1))
}

// SharedPrefix returns the number of leading digits a and b have in common.
func (s Space) SharedPrefix(a, b ID) int {
	var lz int
	if x := a.Hi ^ b.Hi; x != 0 {
		lz = bits.LeadingZeros64(x)
	} else {
		lz = 64 + bits.LeadingZeros64(a.Lo^b.Lo)
	}
	if lz >= s.Bits {
		return s.Digits()
	}
	return lz / s.B
}

// Mask clears the bits of id below the space's width.
func (s Space) Mask(id ID) ID {
	switch {
	case s.Bits >= 128:
		return id
	case s.Bits > 64:
		return ID{id.Hi, id.Lo &^ (1<<(128-s.Bits) - 1)}
	default:
		return ID{id.Hi &^ (1<<(64-s.Bits) - 1), 0}
	}
}

// Unit is the value of the least significant bit of an id of this width.
func (s Space) Unit() ID { return shl(ID{0, 1}, 128-s.Bits) }

// PrefixRange returns the half-open range [lo, lo+span) of ids whose first
// digits equal those of id up to digit row, followed by digit col. The span
// is returned as an ID; ids of this space with that prefix are exactly those x
// with x.Sub(lo) < span.
func (s Space) PrefixRange(id ID, row, col int) (lo, span ID) {
	keep := row * s.B
	var prefix ID
	if keep > 0 {
		prefix = shl(shr(id, 128-keep), 128-keep)
	}
	lo = prefix.Add(shl(ID{0, uint64(col)}, 128-keep-s.B))
	span = shl(ID{0, 1}, 128-keep-s.B)
	return lo, span
}

// FromBytes builds an id from the first bytes of b (big-endian), truncated to
// the space's width; missing bytes count as zero.
func (s Space) FromBytes(b []byte) ID {
	var buf [16]byte
	copy(buf[:], b)
	var id ID
	for i := 0; i < 8; i++ {
		id.Hi = id.Hi<<8 | uint64(buf[i])
		id.Lo = id.Lo<<8 | uint64(buf[8+i])
	}
	return s.Mask(id)
}

// Random draws a uniformly random id of this width from r.
func (s Space) Random(r *rand.Rand) ID { return s.Mask(ID{r.Uint64(), r.Uint64()}) }

// Format renders id as the hexadecimal digits of its width (rounded up to a
// whole hex digit), e.g. "150d" for a 16-bit id.
func (s Space) Format(id ID) string {
	var buf [16]byte
	for i := 0; i < 8; i++ {
		buf[i] = byte(id.Hi >> (56 - 8*i))
		buf[8+i] = byte(id.Lo >> (56 - 8*i))
	}
	return hex.EncodeToString(buf[:])[:(s.Bits+3)/4]
}

// Parse reads an id written as by Format: exactly the hex digits of the width.
func (s Space) Parse(text string) (ID, error) {
	want := (s.Bits + 3) / 4
	if len(text) != want {
		return ID{}, fmt.Errorf("parse id %q: want %d hex digits for %d bits", text, want, s.Bits)
	}
	padded := text + strings.Repeat("0", 32-len(text))
	b, err := hex.DecodeString(padded)
	if err != nil {
		return ID{}, fmt.Errorf("parse id %q: %w", text, err)
	}
	id := s.FromBytes(b)
	if s.Format(id) != strings.ToLower(text) {
		return ID{}, fmt.Errorf("parse id %q: bits below the %d-bit width are set", text, s.Bits)
	}
	return id, nil
}

func shr(id ID, n int) ID {
	switch {
	case n <= 0:
		return id
	case n >= 128:
		return ID{}
	case n >= 64:
		return ID{0, id.Hi >> (n - 64)}
	default:
		return ID{id.Hi >> n, id.Lo>>n | id.Hi<<(64-n)}
	}
}

func shl(id ID, n int) ID {
	switch {
	case n <= 0:
		return id
	case n >= 128:
		return ID{}
	case n >= 64:
		return ID{id.Lo << (n - 64), 0}
	default:
		return ID{id.Hi<<n | id.Lo>>(64-n), id.Lo << n}
	}
}
