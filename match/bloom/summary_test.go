package bloom_test

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/match/bloom/bloomtest"
)

// bruteSummary is the reference summary: the union of the bits of every
// dictionary term that holds on e, each evaluated exactly.
func bruteSummary(d *bloom.Dictionary, e match.Event) []uint64 {
	p := d.Params()
	want := p.NewFilter()
	for _, t := range d.Terms() {
		if t.Holds(e) {
			p.AddKey(want, t.Key())
		}
	}
	return want.Words()
}

// TestSummaryMatchesBruteForce checks the chain-indexed summary builder
// against the reference on random dictionaries (with removals, so stale
// indexes are rebuilt) and random events.
func TestSummaryMatchesBruteForce(t *testing.T) {
	for _, p := range []bloom.Params{{}, {Flat: true}, {M: 4096, K: 2}} {
		for seed := uint64(1); seed <= 5; seed++ {
			t.Run(fmt.Sprintf("%v/seed=%d", p.Resolved(), seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 1))
				d, err := bloom.NewDictionary(p)
				if err != nil {
					t.Fatal(err)
				}
				var live []match.Filter
				for round := range 20 {
					for range 30 {
						f := bloomtest.RandomFilter(r)
						d.AddFilter(f)
						live = append(live, f)
					}
					for range 10 {
						i := r.IntN(len(live))
						if err := d.RemoveFilter(live[i]); err != nil {
							t.Fatal(err)
						}
						live = slices.Delete(live, i, i+1)
					}
					got := p.NewFilter()
					for range 20 {
						e := bloomtest.RandomEvent(r)
						d.Summary(e, got)
						if want := bruteSummary(d, e); !slices.Equal(got.Words(), want) {
							t.Fatalf("seed %d round %d event %v: summary %x, want %x", seed, round, e, got.Words(), want)
						}
					}
				}
			})
		}
	}
}

// TestTermsAreEquivalentToFilter: a filter matches an event exactly when
// all its terms hold, for both term modes; so the dictionary loses no
// precision beyond hashing.
func TestTermsAreEquivalentToFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 2))
	for _, p := range []bloom.Params{{}, {Flat: true}} {
		for range 20000 {
			f, e := bloomtest.RandomFilter(r), bloomtest.RandomEvent(r)
			all := true
			for _, term := range p.Terms(f) {
				all = all && term.Holds(e)
			}
			if all != f.Matches(e) {
				t.Fatalf("%v: filter %v on %v: matches %v, all terms hold %v", p, f, e, f.Matches(e), all)
			}
		}
	}
}

// TestQualifiedTerms pins the decomposition of one filter.
func TestQualifiedTerms(t *testing.T) {
	f := match.MustParse(`symbol == "IBM" && price < 10 && side == "buy" && venue != "X"`)
	var got []string
	for _, term := range (bloom.Params{}).Terms(f) {
		got = append(got, term.String())
	}
	want := []string{
		`side == "buy" && symbol == "IBM" && price < 10`,
		`side == "buy"`,
		`symbol == "IBM"`,
		`side == "buy" && symbol == "IBM" && venue != "X"`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("terms %q, want %q", got, want)
	}
}

// TestNoFalseNegative: for random filters in the dictionary, the summary
// of any event a filter matches contains the filter's encoding.
func TestNoFalseNegative(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 3))
	for _, p := range []bloom.Params{{M: 64, K: 1}, {}, {Flat: true, K: 8}} {
		d, _ := bloom.NewDictionary(p)
		var fs []match.Filter
		for range 300 {
			f := bloomtest.RandomFilter(r)
			d.AddFilter(f)
			fs = append(fs, f)
		}
		sum := p.NewFilter()
		for range 2000 {
			e := bloomtest.RandomEvent(r)
			d.Summary(e, sum)
			for _, f := range fs {
				if f.Matches(e) && !bloom.Contains(sum, p.Encode(f)) {
					t.Fatalf("%v: %v matches %v but the summary lacks its bits", p, f, e)
				}
			}
		}
	}
}

func TestDictionaryRefcounts(t *testing.T) {
	d, _ := bloom.NewDictionary(bloom.Params{})
	f := match.MustParse(`a == 1 && b < 3`)
	g := match.MustParse(`a == 1 && c prefix "x"`)
	d.AddFilter(f)
	d.AddFilter(g)
	d.AddFilter(f)
	if d.Len() != 3 {
		t.Fatalf("Len %d, want 3 (a == 1, a == 1 && b < 3, a == 1 && c prefix \"x\")", d.Len())
	}
	if n := d.Refs(bloom.Term{C: f.At(0)}); n != 3 {
		t.Fatalf("refs of a == 1: %d, want 3", n)
	}
	before := fmt.Sprint(d.Terms())
	if err := d.RemoveFilter(match.MustParse(`a == 1 && b < 4`)); err == nil {
		t.Fatal("removing a filter whose terms are absent succeeded")
	}
	if before != fmt.Sprint(d.Terms()) || d.Refs(bloom.Term{C: f.At(0)}) != 3 {
		t.Fatal("a failed RemoveFilter changed the dictionary")
	}
	for _, h := range []match.Filter{f, f, g} {
		if err := d.RemoveFilter(h); err != nil {
			t.Fatal(err)
		}
	}
	if d.Len() != 0 || len(d.Terms()) != 0 {
		t.Fatalf("dictionary not empty after removing everything: %v", d.Terms())
	}
}

func TestParams(t *testing.T) {
	for _, p := range []bloom.Params{{M: 100}, {M: 32}, {M: bloom.MaxM + 64}, {K: 65}} {
		if p.Validate() == nil {
			t.Errorf("%v validated", p)
		}
	}
	if err := (bloom.Params{}).Compatible(bloom.Params{M: bloom.DefaultM, K: bloom.DefaultK}); err != nil {
		t.Errorf("defaults incompatible with themselves: %v", err)
	}
	if err := (bloom.Params{}).Compatible(bloom.Params{Seed: 1}); err == nil {
		t.Error("different seeds reported compatible")
	}
	if _, err := bloom.NewDictionary(bloom.Params{M: 65}); err == nil {
		t.Error("NewDictionary accepted m = 65")
	}
}

// TestSummaryUpToMatchesFull: SummaryUpTo gives up exactly when the full
// summary has more than maxBits bits set, and otherwise builds the full
// summary; a wide event (100 satisfied terms in 256 bits) gives up early.
func TestSummaryUpToMatchesFull(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 1))
	p := bloom.Params{M: 256, K: 3}
	d, err := bloom.NewDictionary(p)
	if err != nil {
		t.Fatal(err)
	}
	var attrs []match.Attr
	for i := range 100 {
		name := fmt.Sprintf("w%d", i)
		d.AddFilter(match.MustParse(name + " == 1"))
		attrs = append(attrs, match.Attr{Name: name, Value: match.Int(1)})
	}
	for range 300 {
		d.AddFilter(bloomtest.RandomFilter(r))
	}
	full, part := p.NewFilter(), p.NewFilter()
	events := []match.Event{match.MustEvent(attrs...)}
	for range 200 {
		events = append(events, bloomtest.RandomEvent(r))
	}
	gaveUp := 0
	for i, e := range events {
		d.Summary(e, full)
		n := 0
		for _, w := range full.Words() {
			n += bits.OnesCount64(w)
		}
		for _, limit := range []int{0, 3, n - 1, n, 128} {
			over := d.SummaryUpTo(e, part, limit)
			if over != (n > limit) {
				t.Fatalf("event %d: %d bits, limit %d: over %v", i, n, limit, over)
			}
			if !over && !slices.Equal(part.Words(), full.Words()) {
				t.Fatalf("event %d: limit %d: partial summary %x, want %x", i, limit, part.Words(), full.Words())
			}
			if over {
				gaveUp++
			}
		}
	}
	if gaveUp == 0 {
		t.Fatal("no summary gave up: weak test")
	}
}
