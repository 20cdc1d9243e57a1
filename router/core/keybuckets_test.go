package core

import (
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// keyStrings are values for the buckets' tests, several of each length.
var keyStrings = []string{"", "x", "y", "z", "IBM", "MSF", "S100", "S200", "AAPL.X", "sensor-0001", "sensor-0002"}

// bucketByLength is a value hash for tests that puts the strings of one
// length in one bucket, with distinct hashes (for keyStrings): a value
// then shares its bucket with other values without sharing their hash.
func bucketByLength(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return uint32(len(s))<<(32-keyBucketBits) | h.Sum32()&(1<<(32-keyBucketBits)-1)
}

// TestKeyBucketsFollowTheKey: whatever equalities come and go on two
// attributes (repeated, several in one filter, filters without one), the
// key's keyedFilters, and only the key's, has buckets, and they count
// exactly its distinct string values; excludes answers what the
// definition says for every value, a value sharing a subscribed value's
// bucket included.
func TestKeyBucketsFollowTheKey(t *testing.T) {
	t.Run("hash=maphash", func(t *testing.T) { testKeyBucketsFollowTheKey(t, nil) })
	t.Run("hash=by-length", func(t *testing.T) { testKeyBucketsFollowTheKey(t, bucketByLength) })
}

func testKeyBucketsFollowTheKey(t *testing.T, valueHash func(string) uint32) {
	strs := keyStrings
	rapid.Check(t, func(t *rapid.T) {
		c := newLinkCache()
		c.testHash = valueHash
		var held []match.Filter
		for range rapid.IntRange(1, 30).Draw(t, "steps") {
			if len(held) > 0 && rapid.IntRange(0, 2).Draw(t, "remove") == 0 {
				i := rapid.IntRange(0, len(held)-1).Draw(t, "which")
				c.count(held[i], -1)
				held = append(held[:i], held[i+1:]...)
			} else {
				f := drawKeyFilter(t, strs)
				c.count(f, 1)
				held = append(held, f)
			}
			c.keyOf(match.MustEvent()) // picks the key
			checkBuckets(t, c)
			for _, s := range strs {
				k := keyValue{v: match.Str(s), ok: true}
				if got, want := c.excludes(&k), modelExcludes(c, held, s); got != want {
					t.Fatalf("excludes %q = %v, want %v (key %q, filters %v)", s, got, want, c.key, held)
				}
			}
		}
	})
}

// drawKeyFilter draws a filter of equalities on k and j (zero to two),
// sometimes with a range constraint.
func drawKeyFilter(t *rapid.T, strs []string) match.Filter {
	var cs []match.Constraint
	for range rapid.IntRange(0, 2).Draw(t, "equalities") {
		attr := rapid.SampledFrom([]string{"k", "j"}).Draw(t, "attr")
		cs = append(cs, match.Constraint{Attr: attr, Op: match.OpEq, Val: match.Str(rapid.SampledFrom(strs).Draw(t, "value"))})
	}
	if len(cs) == 0 || rapid.Bool().Draw(t, "range") {
		cs = append(cs, match.Constraint{Attr: "n", Op: match.OpGt, Val: match.Int(0)})
	}
	return match.MustFilter(cs...)
}

// checkBuckets checks that the key's keyedFilters alone has buckets, and
// that they count its distinct strings.
func checkBuckets(t *rapid.T, c *linkCache) {
	for attr, kf := range c.keyed {
		if attr != c.key {
			if kf.buckets != nil {
				t.Fatalf("attribute %q has buckets, the key is %q", attr, c.key)
			}
			continue
		}
		if kf != c.kf || kf.buckets == nil {
			t.Fatalf("the key %q has no buckets (kf %p, keyed %p)", attr, c.kf, kf)
		}
		if want := newKeyBuckets(&kf.strs); kf.buckets.n != want.n {
			t.Fatalf("the key's buckets do not count its strings %v", kf.strs)
		}
	}
}

// modelExcludes is excludes by its definition: every filter has an
// equality on c's key, and none names s or a value of s's hash.
func modelExcludes(c *linkCache, held []match.Filter, s string) bool {
	if c.key == "" {
		return false
	}
	for _, f := range held {
		keyed := false
		for i := range f.Len() {
			if k := f.At(i); k.Op == match.OpEq && k.Attr == c.key {
				keyed = true
				if c.valueHash(k.Val.AsString()) == c.valueHash(s) {
					return false
				}
			}
		}
		if !keyed {
			return false
		}
	}
	return true
}

// TestKeyBucketsCollision: a string in the bucket of a subscribed one is
// still excluded (the map decides), and the subscribed one is not.
func TestKeyBucketsCollision(t *testing.T) {
	a, b := "S100", "S200"
	c := newLinkCache()
	c.testHash = bucketByLength
	c.count(match.MustParse(fmt.Sprintf("k == %q", a)), 1)
	ka, kb := c.keyOf(match.MustEvent(match.Attr{Name: "k", Value: match.Str(a)})), keyValue{v: match.Str(b), ok: true}
	if !c.kf.buckets.mayHold(c.valueHash(b)) || c.valueHash(a) == c.valueHash(b) {
		t.Fatalf("%q and %q should share a bucket, not a hash", a, b)
	}
	if c.excludes(&ka) || !c.excludes(&kb) {
		t.Fatalf("excludes %q = %v (want false), %q = %v (want true)", a, c.excludes(&ka), b, c.excludes(&kb))
	}
}
