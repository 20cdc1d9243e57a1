package poset

import (
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestFwdSetAgreesWithMap: random puts (of a node's own filter, an
// equivalent filter of another text, or another filter) and deletions on
// a few nodes leave a forwarding set that answers get, len and filters
// as a map from node to filter does, each node in one of its two parts.
func TestFwdSetAgreesWithMap(t *testing.T) {
	texts := []string{`a == 1`, `b > 2`, `s prefix "x"`}
	rapid.Check(t, func(t *rapid.T) {
		c := NewShallow(Config{}).core
		var nodes []*node
		for _, text := range texts {
			f := match.MustParse(text)
			nodes = append(nodes, c.newNode(f, f.String()))
		}
		others := []match.Filter{match.MustParse(`a >= 1 && a <= 1`), match.MustParse(`c exists`)}
		s, ref := newFwdSet(), map[*node]match.Filter{}
		for range rapid.IntRange(0, 50).Draw(t, "steps") {
			w := rapid.SampledFrom(nodes).Draw(t, "node")
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				s.del(w)
				delete(ref, w)
			case 1:
				f := rapid.SampledFrom(others).Draw(t, "other")
				s.put(w, f)
				ref[w] = f
			default:
				f := match.MustParse(w.text) // equal to the node's, another copy
				s.put(w, f)
				ref[w] = f
			}
			for _, n := range nodes {
				got, ok := s.get(n)
				want, wok := ref[n]
				if ok != wok || ok && !got.Equal(want) {
					t.Fatalf("node %s forwards %v %v, want %v %v", n.text, got, ok, want, wok)
				}
				if _, other := s.other[n]; other && s.own.has(n) {
					t.Fatalf("node %s in both parts", n.text)
				}
			}
			want := slices.Collect(func(yield func(match.Filter) bool) {
				for _, f := range ref {
					yield(f)
				}
			})
			got := s.filters(nil)
			slices.SortFunc(got, match.Filter.Compare)
			slices.SortFunc(want, match.Filter.Compare)
			if s.len() != len(ref) || !slices.EqualFunc(got, want, match.Filter.Equal) {
				t.Fatalf("filters %v (len %d), want %v", got, s.len(), want)
			}
		}
	})
}
