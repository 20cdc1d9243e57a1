package core

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// BenchmarkLinkTableTopic measures what the first router's link table
// spends per event on topic traffic: one link holding ten filters
// symbol == "Sn" (the topic subscriptions of sift bench net), events from
// a client over 1,000 symbols, so that 1% of them go on and the rest
// match nothing.
//
//	go test -run XXX -bench LinkTableTopic ./router/core
func BenchmarkLinkTableTopic(b *testing.B) {
	lt := NewLinkTable()
	var add []string
	for i := range 10 {
		add = append(add, fmt.Sprintf(`symbol == "S%d"`, i*100))
	}
	if err := lt.Apply(1, &wire.Routes{Snapshot: true, Add: add}); err != nil {
		b.Fatal(err)
	}
	evs := make([]match.Event, 1000)
	for i := range evs {
		evs[i] = match.MustEvent(
			match.Attr{Name: "price", Value: match.MustFloat(float64(40+i%10) + 0.5)},
			match.Attr{Name: "symbol", Value: match.Str(fmt.Sprintf("S%d", i))},
			match.Attr{Name: "volume", Value: match.Int(int64(i))})
	}
	hit := 0
	for i := range b.N {
		hits, _ := lt.Route(0, evs[i%len(evs)], 0)
		hit += len(hits)
	}
	if want := b.N / 100; hit < want-10 || hit > want+10 {
		b.Fatalf("%d of %d events went on, want about %d", hit, b.N, want)
	}
}
