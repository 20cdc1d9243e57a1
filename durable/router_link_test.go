package durable

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestLinkIndexMatchesFilters: a link's index answers whether any of its
// filters matches an event exactly as a walk over its filters does, after
// any sequence of installs, reinstalls, uninstalls and whole-set
// replacements.
func TestLinkIndexMatchesFilters(t *testing.T) {
	filters := []string{"k < 3", "k >= 7", "k == 5", "sym == \"HP\"", "k > 2 && sym == \"SUN\"", "k != 4"}
	rapid.Check(t, func(t *rapid.T) {
		l := newLink()
		sub := func() string { return fmt.Sprintf("s%d", rapid.IntRange(0, 7).Draw(t, "sub")) }
		filter := func() linkFilter {
			return linkFilter{filter: match.MustParse(rapid.SampledFrom(filters).Draw(t, "filter"))}
		}
		for range rapid.IntRange(1, 40).Draw(t, "ops") {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0, 1:
				l.setFilter(sub(), filter())
			case 2:
				l.dropFilter(sub())
			case 3:
				fs := map[string]linkFilter{}
				for range rapid.IntRange(0, 5).Draw(t, "set") {
					fs[sub()] = filter()
				}
				l.replaceFilters(fs)
			}
			if l.index.Len() != len(l.filters) || len(l.ids) != len(l.filters) {
				t.Fatalf("%d filters, %d in the index, %d ids", len(l.filters), l.index.Len(), len(l.ids))
			}
			for k := range int64(10) {
				for _, sym := range []string{"HP", "SUN"} {
					e := match.MustEvent(match.Attr{Name: "k", Value: match.Int(k)}, match.Attr{Name: "sym", Value: match.Str(sym)})
					want := false
					for _, f := range l.filters {
						want = want || f.filter.Matches(e)
					}
					if got := l.matches(Msg{Kind: MsgData, Event: e}); got != want {
						t.Fatalf("event %v: index says %v, the filters %v", e, got, want)
					}
				}
			}
		}
	})
}
