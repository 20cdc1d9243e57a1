package bloomtest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bits-and-blooms/bitset"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"pgregory.net/rapid"
)

// CheckIndex runs a random workload (seeded; the seed is logged) through
// a fresh index from newIndex and through match.Scan, with inserts,
// deletes and events interleaved, and fails unless Match equals Scan and
// MatchRaw (when implemented) is a superset of Scan on every event.
func CheckIndex(t *testing.T, seed uint64, newIndex func() match.Index) {
	t.Helper()
	r, name := seedRand(seed)
	t.Logf("CheckIndex %s", name)
	idx, ref := newIndex(), match.NewScan()
	var live []match.ID
	next := match.ID(0)
	for step := range 3000 {
		switch op := r.IntN(10); {
		case op < 5:
			f := RandomFilter(r)
			mustAgree(t, idx.Insert(next, f), ref.Insert(next, f), "insert")
			live = append(live, next)
			next++
		case op < 7 && len(live) > 0:
			i := r.IntN(len(live))
			id := live[i]
			live = slices.Delete(live, i, i+1)
			mustAgree(t, idx.Delete(id), ref.Delete(id), "delete")
		default:
			e := RandomEvent(r)
			if err := compareMatch(idx, ref, e); err != nil {
				t.Fatalf("%s, step %d, %d subscriptions: %v", name, step, ref.Len(), err)
			}
		}
	}
	if err := idx.Delete(next); err == nil {
		t.Fatalf("%s: deleting an absent id succeeded", name)
	}
	if len(live) > 0 {
		if err := idx.Insert(live[0], match.Filter{}); err == nil {
			t.Fatalf("%s: inserting a present id succeeded", name)
		}
	}
}

func mustAgree(t *testing.T, got, want error, what string) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Fatalf("%s: index error %v, scan error %v", what, got, want)
	}
}

// compareMatch checks one event: exact equals Scan, raw covers Scan.
func compareMatch(idx match.Index, ref *match.Scan, e match.Event) error {
	want := match.SortIDs(ref.Match(e, nil))
	got := match.SortIDs(idx.Match(e, nil))
	if !slices.Equal(got, want) {
		return fmt.Errorf("event %v: Match %v, Scan %v", e, got, want)
	}
	rm, ok := idx.(match.RawMatcher)
	if !ok {
		return nil
	}
	raw := match.SortIDs(rm.MatchRaw(e, nil))
	for _, id := range want {
		if _, found := slices.BinarySearch(raw, id); !found {
			f, _ := ref.Filter(id)
			return fmt.Errorf("event %v: false negative: MatchRaw %v lacks %d (%v)", e, raw, id, f)
		}
	}
	return nil
}

// CheckTree is a rapid property test of a Bloom tree: across random
// inserts and deletes of filters of m bits (m from ms), Match equals a
// brute-force subset test over every stored filter, deleting an absent
// pair fails, Len counts references, and MatchAny (where the tree has it)
// says whether Match finds anything.
func CheckTree(t *testing.T, ms []int, newTree func(m int) bloom.Tree) {
	rapid.Check(t, func(rt *rapid.T) {
		m := rapid.SampledFrom(ms).Draw(rt, "m")
		tree := newTree(m)
		model := map[treeRef]int{}
		words := map[string][]uint64{}
		total := 0
		filters := rapid.SliceOfN(filterGen(m), 1, 12).Draw(rt, "pool")
		for _, s := range filters {
			words[key(s)] = s
		}
		rt.Repeat(map[string]func(*rapid.T){
			"insert": func(rt *rapid.T) {
				s := rapid.SampledFrom(filters).Draw(rt, "filter")
				src := rapid.Uint64Range(0, 3).Draw(rt, "src")
				tree.Insert(bitset.From(slices.Clone(s)), src)
				model[treeRef{key(s), src}]++
				total++
			},
			"delete": func(rt *rapid.T) {
				s := rapid.SampledFrom(filters).Draw(rt, "filter")
				src := rapid.Uint64Range(0, 3).Draw(rt, "src")
				err := tree.Delete(bitset.From(slices.Clone(s)), src)
				ref := treeRef{key(s), src}
				if (err == nil) != (model[ref] > 0) {
					rt.Fatalf("delete (%x, %d): error %v with %d references", s, src, err, model[ref])
				}
				if err == nil {
					model[ref]--
					total--
				}
			},
			"match": func(rt *rapid.T) {
				e := eventGen(m, filters).Draw(rt, "event")
				got := tree.Match(bitset.From(slices.Clone(e)), nil)
				slices.Sort(got)
				want := bruteMatch(model, words, e)
				if !slices.Equal(got, want) {
					rt.Fatalf("match %x: got %v, want %v", e, got, want)
				}
				if a, ok := tree.(interface{ MatchAny(*bitset.BitSet) bool }); ok && a.MatchAny(bitset.From(slices.Clone(e))) != (len(want) > 0) {
					rt.Fatalf("MatchAny %x = %v, but %d sources match", e, !(len(want) > 0), len(want))
				}
			},
			"": func(rt *rapid.T) {
				if tree.Len() != total {
					rt.Fatalf("Len %d, want %d", tree.Len(), total)
				}
			},
		})
	})
}

type treeRef struct {
	filter string
	src    uint64
}

func key(words []uint64) string { return fmt.Sprint(words) }

// bruteMatch is the reference: the sources of every stored filter (with a
// live reference) that e contains, each once per (filter, source).
func bruteMatch(model map[treeRef]int, words map[string][]uint64, e []uint64) []uint64 {
	var out []uint64
	for ref, n := range model {
		if n > 0 && bloom.ContainsWords(e, words[ref.filter]) {
			out = append(out, ref.src)
		}
	}
	slices.Sort(out)
	return out
}

// filterGen draws a filter of m bits with 0 to 8 set bits, mostly among
// the first 2*64 positions so that filters share prefixes and parts.
func filterGen(m int) *rapid.Generator[[]uint64] {
	return rapid.Custom(func(rt *rapid.T) []uint64 {
		w := make([]uint64, m/64)
		n := rapid.IntRange(0, 8).Draw(rt, "bits")
		for range n {
			hi := min(m, 128)
			if rapid.IntRange(0, 3).Draw(rt, "far") == 0 {
				hi = m
			}
			b := rapid.IntRange(0, hi-1).Draw(rt, "bit")
			w[b/64] |= 1 << (b % 64)
		}
		return w
	})
}

// eventGen draws a summary: the union of some pool filters plus random
// bits, or a random filter.
func eventGen(m int, pool [][]uint64) *rapid.Generator[[]uint64] {
	return rapid.Custom(func(rt *rapid.T) []uint64 {
		e := filterGen(m).Draw(rt, "noise")
		for _, s := range pool {
			if rapid.Bool().Draw(rt, "include") {
				for i, w := range s {
					e[i] |= w
				}
			}
		}
		return e
	})
}
