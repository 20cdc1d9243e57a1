// Package num gives the baseline indexes an exactly ordered key for
// numeric values: Sift compares int64 and float64 values by their exact
// mathematical value, and an int64 above 2^53 has no float64 equal to it,
// so a plain float64 key would be wrong at the edges.
package num

import (
	"math"

	"github.com/sift-pubsub/sift/match"
)

// Key is a number as F + R exactly: F is the float64 nearest to it and R
// the (small) remainder, zero for every float64 and for every int64 of at
// most 53 bits. Rounding to nearest is monotone, so keys order by F and
// then by R.
type Key struct {
	F float64
	R int64
}

// Of returns the key of a numeric value; ok is false for strings and
// bools.
func Of(v match.Value) (k Key, ok bool) {
	switch v.Kind() {
	case match.KindFloat:
		return Key{F: v.AsFloat()}, true
	case match.KindInt:
		i := v.AsInt()
		f := float64(i)
		if f >= 9223372036854775808.0 { // 2^63: int64(f) would overflow
			return Key{F: f, R: int64(uint64(i) - 1<<63)}, true
		}
		return Key{F: f, R: i - int64(f)}, true
	}
	return Key{}, false
}

// Compare orders a and b: -1, 0 or +1.
func Compare(a, b Key) int {
	switch {
	case a.F < b.F:
		return -1
	case a.F > b.F:
		return 1
	case a.R < b.R:
		return -1
	case a.R > b.R:
		return 1
	}
	return 0
}

// Less reports whether a < b.
func Less(a, b Key) bool { return a.F < b.F || a.F == b.F && a.R < b.R }

// Inf and NegInf are keys above and below every finite number.
var (
	Inf    = Key{F: math.Inf(1)}
	NegInf = Key{F: math.Inf(-1)}
)
