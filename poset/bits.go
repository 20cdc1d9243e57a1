package poset

// Bits is a fixed-length bit vector: one bit per filter of a vector.
type Bits []uint64

// NewBits returns a vector of n zero bits.
func NewBits(n int) Bits { return make(Bits, (n+63)/64) }

// Set sets bit i.
func (b Bits) Set(i int) { b[i/64] |= 1 << (i % 64) }

// Get reports bit i.
func (b Bits) Get(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

// beyond reports whether a bit at position n or above is set.
func (b Bits) beyond(n int) bool {
	if n%64 == 0 || len(b) == 0 {
		return false // NewBits(n) has no bits beyond n
	}
	return b[len(b)-1]>>(n%64) != 0
}

// Equal reports whether a and b hold the same bits.
func (b Bits) Equal(c Bits) bool {
	if len(b) != len(c) {
		return false
	}
	for i := range b {
		if b[i] != c[i] {
			return false
		}
	}
	return true
}
