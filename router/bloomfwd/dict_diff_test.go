package bloomfwd

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match/bloom"
)

// diffByClone is diff as it was written first, the reference: it builds
// the set held after m in full and compares the two sets.
func (d *Dict) diffByClone(held map[string]bool, m *wire.BloomTerms) (add, remove []bloom.Term, err error) {
	next := maps.Clone(held)
	if m.Snapshot {
		clear(next)
	}
	parsed := make(map[string]bloom.Term)
	for _, w := range m.Remove {
		t, err := parseTerm(d.p, w)
		if err != nil {
			return nil, nil, err
		}
		if !next[t.String()] {
			return nil, nil, fmt.Errorf("removes %s, not held", t)
		}
		delete(next, t.String())
	}
	for _, w := range m.Add {
		t, err := parseTerm(d.p, w)
		if err != nil {
			return nil, nil, err
		}
		if next[t.String()] {
			return nil, nil, fmt.Errorf("adds %s, held", t)
		}
		next[t.String()] = true
		parsed[t.String()] = t
	}
	for _, text := range slices.Sorted(maps.Keys(next)) {
		if !held[text] {
			add = append(add, parsed[text])
		}
	}
	for _, text := range slices.Sorted(maps.Keys(held)) {
		if !next[text] {
			remove = append(remove, d.terms[text].t)
		}
	}
	return add, remove, nil
}

// TestDiffIsDiffByClone: for any terms held from a link and any message
// over a small universe of terms (so that messages add what is held,
// remove what is not, repeat terms and mix both), diff accepts exactly
// what the reference accepts and returns the same terms in the same order.
func TestDiffIsDiffByClone(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		d, err := NewDict(Config{})
		if err != nil {
			rt.Fatal(err)
		}
		d.LinkUp(1)
		universe := rapid.IntRange(1, 12).Draw(rt, "universe")
		term := func(i int) wire.BloomTerm { return wire.BloomTerm{C: fmt.Sprintf("a == %d", i)} }
		var seed []wire.BloomTerm
		for i := range universe {
			if rapid.Bool().Draw(rt, fmt.Sprintf("held%d", i)) {
				seed = append(seed, term(i))
			}
		}
		if _, err := d.Receive(1, &wire.BloomTerms{Snapshot: true, Add: seed}); err != nil {
			rt.Fatal(err)
		}
		held := d.links[1]
		pick := rapid.Custom(func(rt *rapid.T) wire.BloomTerm { return term(rapid.IntRange(0, universe).Draw(rt, "term")) })
		m := &wire.BloomTerms{
			Snapshot: rapid.Bool().Draw(rt, "snapshot"),
			Add:      rapid.SliceOfN(pick, 0, 6).Draw(rt, "add"),
			Remove:   rapid.SliceOfN(pick, 0, 6).Draw(rt, "remove"),
		}
		add, remove, err := d.diff(held, m)
		wantAdd, wantRemove, wantErr := d.diffByClone(held, m)
		if (err == nil) != (wantErr == nil) {
			rt.Fatalf("held %v, message %+v: error %v, reference %v", slices.Sorted(maps.Keys(held)), m, err, wantErr)
		}
		if !slices.Equal(termTexts(add), termTexts(wantAdd)) || !slices.Equal(termTexts(remove), termTexts(wantRemove)) {
			rt.Fatalf("held %v, message %+v: +%v -%v, reference +%v -%v", slices.Sorted(maps.Keys(held)), m,
				termTexts(add), termTexts(remove), termTexts(wantAdd), termTexts(wantRemove))
		}
	})
}

func termTexts(ts []bloom.Term) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.String()
	}
	return out
}

// BenchmarkDictReceiveOne: one term added by a link that already holds
// many, as a link floods its subscriptions' terms one message each. Its
// cost should not grow with the terms held.
func BenchmarkDictReceiveOne(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("held=%d", n), func(b *testing.B) {
			d, err := NewDict(Config{})
			if err != nil {
				b.Fatal(err)
			}
			d.LinkUp(1)
			d.LinkUp(2)
			for i := range n {
				if _, err := d.Receive(1, &wire.BloomTerms{Add: []wire.BloomTerm{{C: fmt.Sprintf("a == %d", i)}}}); err != nil {
					b.Fatal(err)
				}
			}
			add := &wire.BloomTerms{Add: []wire.BloomTerm{{C: "b == 1"}}}
			remove := &wire.BloomTerms{Remove: []wire.BloomTerm{{C: "b == 1"}}}
			b.ResetTimer()
			for range b.N {
				if _, err := d.Receive(1, add); err != nil {
					b.Fatal(err)
				}
				if _, err := d.Receive(1, remove); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
