package bloom_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/sbstree"
)

// TestIndexCountsAndErrors pins the counters of a tiny run and the error
// paths that must leave the index unchanged.
func TestIndexCountsAndErrors(t *testing.T) {
	tree, err := sbstree.New(1024)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := bloom.NewIndex("test", bloom.Params{}, tree)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{`a == 1`, `a == 2`, `a >= 1 && b prefix "x"`} {
		if err := idx.Insert(match.ID(i), match.MustParse(text)); err != nil {
			t.Fatal(err)
		}
	}
	if err := idx.Insert(1, match.MustParse(`a == 3`)); err == nil {
		t.Fatal("duplicate insert succeeded")
	}
	e := match.MustEvent(match.Attr{Name: "a", Value: match.Int(1)}, match.Attr{Name: "b", Value: match.Str("xy")})
	if got := match.SortIDs(idx.Match(e, nil)); !slices.Equal(got, []match.ID{0, 2}) {
		t.Fatalf("Match = %v, want [0 2]", got)
	}
	raw := match.SortIDs(idx.MatchRaw(e, nil))
	if !slices.Contains(raw, 0) || !slices.Contains(raw, 2) {
		t.Fatalf("MatchRaw = %v lacks an exact match", raw)
	}
	s := idx.Counters()
	if s.Events != 2 || s.Exact != 4 || s.Candidates != 2*int64(len(raw)) || s.Forwarded != 2 || s.ForwardedFalse != 0 {
		t.Fatalf("counters %+v after two events with two exact matches each", s)
	}
	if !strings.Contains(idx.Stats(), "exact matches 4") {
		t.Fatalf("Stats() = %q", idx.Stats())
	}
	if err := idx.Delete(2); err != nil {
		t.Fatal(err)
	}
	if err := idx.Delete(2); err == nil {
		t.Fatal("second delete succeeded")
	}
	if got := idx.Match(e, nil); !slices.Equal(got, []match.ID{0}) || idx.Len() != 2 {
		t.Fatalf("after delete: Match = %v, Len = %d", got, idx.Len())
	}
	if idx.Dictionary().Len() != 2 {
		t.Fatalf("dictionary kept %d terms, want 2: %v", idx.Dictionary().Len(), idx.Dictionary().Terms())
	}
}
