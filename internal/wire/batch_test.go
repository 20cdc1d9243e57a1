package wire

import (
	"bytes"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestBatchFramesInPlace: PublishBatch.Frame and DeliverBatch.Frame, built
// in place in the batch's buffer, are byte for byte the frames AppendFrame
// encodes for the same messages, batch after batch on one reused buffer
// (empty batches and multi-byte varints in the header included).
func TestBatchFramesInPlace(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var pb PublishBatch
		var db DeliverBatch
		for round := range rapid.IntRange(1, 4).Draw(t, "rounds") {
			seq := rapid.Uint64().Draw(t, "seq")
			evs := make([]match.Event, rapid.IntRange(0, 5).Draw(t, "n"))
			items := make([]DeliverItem, len(evs))
			for i := range evs {
				evs[i] = genEvent(t, "ev")
				items[i] = DeliverItem{Subs: []uint64{rapid.Uint64Range(1, 1<<40).Draw(t, "sub")}, Event: evs[i]}
				if i%2 == 0 {
					pb.Add(evs[i])
				} else {
					pb.AddRaw(AppendEvent(nil, evs[i]))
				}
				db.Add(items[i].Subs, AppendEvent(nil, evs[i]))
			}
			if want := AppendFrame(nil, &Publish{Seq: seq, Events: evs}); !bytes.Equal(pb.Frame(seq), want) {
				t.Fatalf("round %d: Publish frame\n%x\nwant\n%x", round, pb.Frame(seq), want)
			}
			if want := AppendFrame([]byte("x"), &Publish{Seq: seq, Events: evs}); !bytes.Equal(pb.AppendFrame([]byte("x"), seq), want) {
				t.Fatalf("round %d: Publish AppendFrame differs", round)
			}
			if want := AppendFrame(nil, &Deliver{Items: items}); !bytes.Equal(db.Frame(), want) {
				t.Fatalf("round %d: Deliver frame\n%x\nwant\n%x", round, db.Frame(), want)
			}
			if pb.Len() != len(evs) || db.Len() != len(evs) {
				t.Fatalf("round %d: Len %d and %d, want %d", round, pb.Len(), db.Len(), len(evs))
			}
			if want := len(db.Frame()) - HeaderLen - 1 - uvarintLen(uint64(len(items))); db.Size() != want {
				t.Fatalf("round %d: Deliver Size %d, want %d", round, db.Size(), want)
			}
			if want := len(pb.Frame(seq)) - HeaderLen - 1 - uvarintLen(seq) - uvarintLen(uint64(len(evs))); pb.Size() != want {
				t.Fatalf("round %d: Publish Size %d, want %d", round, pb.Size(), want)
			}
			pb.Reset()
			db.Reset()
		}
	})
}
