package client

import (
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// TestBorrowedDecodingAllocations: the reader's decoder for borrowed
// delivery allocates a few times per Deliver frame, the owned one at least
// twice per event (the attribute list and the string values), which is
// what borrowing saves.
func TestBorrowedDecodingAllocations(t *testing.T) {
	const n = 200
	var batch wire.DeliverBatch
	for i := range n {
		e := match.MustEvent(
			match.Attr{Name: "i", Value: match.Int(int64(i))},
			match.Attr{Name: "note", Value: match.Str("some text")},
			match.Attr{Name: "symbol", Value: match.Str("IBM")},
		)
		batch.Add([]uint64{1, uint64(i + 2)}, wire.AppendEvent(nil, e))
	}
	typ, body, _, err := wire.SplitFrame(batch.Frame(), wire.HardMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	perFrame := func(opts Options) float64 {
		dec := (&Client{opts: opts}).deliverDecoder()
		return testing.AllocsPerRun(20, func() {
			m, err := dec.Decode(typ, body)
			if err != nil || len(m.(*wire.Deliver).Items) != n {
				t.Fatalf("decode: %v", err)
			}
		})
	}
	handler := func(*Subscription, match.Event) {}
	if got := perFrame(Options{OnBorrowedEvent: handler}); got > 10 {
		t.Errorf("borrowed: %v allocations per frame of %d events, want at most 10", got, n)
	}
	if got := perFrame(Options{OnEvent: handler}); got < 2*n {
		t.Errorf("owned: %v allocations per frame of %d events, want at least %d", got, n, 2*n)
	}
}
