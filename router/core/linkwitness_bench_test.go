package core

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// BenchmarkLinkTableWitness measures what the link table of a chain's
// inner router spends per event (10^4 stock filters behind link 2, events
// from link 1): decided by an honest witness (checked with one
// Filter.Matches), and, for comparison, by the index alone.
//
//	go test -run XXX -bench LinkTableWitness ./router
func BenchmarkLinkTableWitness(b *testing.B) {
	lt := NewLinkTable()
	var add []string
	for i := range 10000 {
		add = append(add, fmt.Sprintf(`symbol == "S%d" && price > %d`, i%500, i%40))
	}
	if err := lt.Apply(1, &wire.Routes{Snapshot: true, Add: []string{`price > 0`}}); err != nil {
		b.Fatal(err)
	}
	if err := lt.Apply(2, &wire.Routes{Snapshot: true, Add: add}); err != nil {
		b.Fatal(err)
	}
	evs := make([]match.Event, 512)
	ws := make([]uint64, len(evs))
	for i := range evs {
		evs[i] = match.MustEvent(
			match.Attr{Name: "price", Value: match.MustFloat(float64(40+i%10) + 0.5)},
			match.Attr{Name: "symbol", Value: match.Str(fmt.Sprintf("S%d", i%500))},
			match.Attr{Name: "volume", Value: match.Int(int64(i))})
		hits, _ := lt.Route(1, evs[i], 0)
		if len(hits) != 1 {
			b.Fatalf("event %v: %v", evs[i], hits)
		}
		ws[i] = hits[0].Witness
	}
	b.Run("witness", func(b *testing.B) {
		for i := range b.N {
			if _, d := lt.Route(1, evs[i%len(evs)], ws[i%len(evs)]); d != DecidedByWitness {
				b.Fatalf("decided by %d", d)
			}
		}
	})
	b.Run("index", func(b *testing.B) {
		for i := range b.N {
			lt.out = lt.out[:0]
			lt.routeIndex(1, evs[i%len(evs)], &keyValue{})
		}
	})
}
