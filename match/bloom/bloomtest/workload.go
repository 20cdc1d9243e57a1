// Package bloomtest holds the checks every Bloom tree and Bloom index must
// pass, shared by the bftree and sbstree tests: a rapid property test of a
// Tree against a brute-force subset test, and a differential test of an
// Index against match.Scan on random workloads with ranges, prefixes,
// suffixes, substrings, != and mixed int/float values. Import it only from
// tests.
package bloomtest

import (
	"fmt"
	"math/rand/v2"

	"github.com/sift-pubsub/sift/match"
)

// Random values are drawn from small domains so that filters overlap,
// match and share constraints.
var (
	numAttrs  = []string{"a", "b", "c", "d"}
	strAttrs  = []string{"s", "t"}
	boolAttrs = []string{"z"}
	words     = []string{"", "a", "ab", "abc", "b", "ba", "bab", "c", "abcab", "cab"}
)

// RandomFilter returns a filter of 1 to 4 random constraints.
func RandomFilter(r *rand.Rand) match.Filter {
	n := 1 + r.IntN(4)
	cs := make([]match.Constraint, n)
	for i := range cs {
		cs[i] = randomConstraint(r)
	}
	return match.MustFilter(cs...)
}

func randomConstraint(r *rand.Rand) match.Constraint {
	switch r.IntN(10) {
	case 0, 1, 2, 3, 4:
		ops := []match.Op{match.OpEq, match.OpNe, match.OpLt, match.OpLe, match.OpGt, match.OpGe}
		return match.Constraint{Attr: pick(r, numAttrs), Op: pick(r, ops), Val: randomNumber(r)}
	case 5, 6, 7:
		ops := []match.Op{match.OpEq, match.OpNe, match.OpLt, match.OpGe, match.OpPrefix, match.OpSuffix, match.OpContains}
		return match.Constraint{Attr: pick(r, strAttrs), Op: pick(r, ops), Val: match.Str(pick(r, words))}
	case 8:
		ops := []match.Op{match.OpEq, match.OpNe, match.OpLe}
		return match.Constraint{Attr: pick(r, boolAttrs), Op: pick(r, ops), Val: match.Bool(r.IntN(2) == 0)}
	}
	all := append(append(append([]string{}, numAttrs...), strAttrs...), boolAttrs...)
	return match.Constraint{Attr: pick(r, all), Op: match.OpExists}
}

// randomNumber is an int or a float in [0, 10], floats on a grid of
// halves so that ints and floats compare equal now and then.
func randomNumber(r *rand.Rand) match.Value {
	if r.IntN(2) == 0 {
		return match.Int(r.Int64N(11))
	}
	return match.MustFloat(float64(r.IntN(21)) / 2)
}

// RandomEvent returns an event giving values to a random subset of the
// attributes; now and then a value has an unexpected type.
func RandomEvent(r *rand.Rand) match.Event {
	var attrs []match.Attr
	add := func(name string, v match.Value) {
		if r.IntN(5) > 0 {
			attrs = append(attrs, match.Attr{Name: name, Value: v})
		}
	}
	for _, a := range numAttrs {
		add(a, randomNumber(r))
	}
	for _, a := range strAttrs {
		if r.IntN(10) == 0 {
			add(a, randomNumber(r))
			continue
		}
		add(a, match.Str(pick(r, words)+pick(r, words)))
	}
	for _, a := range boolAttrs {
		add(a, match.Bool(r.IntN(2) == 0))
	}
	return match.MustEvent(attrs...)
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// seedRand returns a seeded generator and a line naming the seed.
func seedRand(seed uint64) (*rand.Rand, string) {
	return rand.New(rand.NewPCG(seed, 0x5eed)), fmt.Sprintf("seed %d", seed)
}
