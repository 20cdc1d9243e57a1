package wire

import (
	"bytes"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestPublishCompactUndoSequences: any sequence of events added, refused
// (a string that is not UTF-8) and taken back (Undo) leaves the batch's
// frame the one the events it holds make when added afresh, both for
// PublishDict and PublishCompact batches, and the frame expands.
func TestPublishCompactUndoSequences(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		compact := rapid.Bool().Draw(t, "compact")
		var b DictBatch
		b.SetCompact(compact)
		var held []match.Event
		undoable := false
		for i := range rapid.IntRange(1, 12).Draw(t, "steps") {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0, 1:
				e := genCompactEvent(t, "e"+string(rune('a'+i)))
				if _, err := b.AddChecked(e); err != nil {
					t.Fatalf("add %v: %v", e, err)
				}
				held, undoable = append(held, e), true
			case 2:
				bad := genCompactEvent(t, "bad"+string(rune('a'+i)))
				attrs := []match.Attr{{Name: "zzz", Value: match.Str("\xff")}}
				for j := range bad.Len() {
					attrs = append(attrs, bad.At(j))
				}
				if _, err := b.AddChecked(match.MustEvent(attrs...)); err == nil {
					t.Fatal("an event with a string that is not UTF-8 accepted")
				}
			case 3:
				b.Undo()
				if undoable {
					held, undoable = held[:len(held)-1], false
				}
			}
		}
		want := freshBody(t, compact, held)
		_, got, _, err := SplitFrame(b.Frame(1), HardMaxFrame)
		if err != nil && len(held) > 0 {
			t.Fatal(err)
		}
		if len(held) == 0 {
			return
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("batch\n%x\nwant\n%x", got, want)
		}
		expand := ExpandPublishDict
		if compact {
			expand = ExpandPublishCompact
		}
		plain, err := expand(nil, got, HardMaxFrame)
		if err != nil {
			t.Fatal(err)
		}
		if w := (&Publish{Seq: 1, Events: held}).AppendBody(nil); !bytes.Equal(plain, w) {
			t.Fatal("the frame does not expand to its events")
		}
	})
}

// freshBody is the body of a batch that added evs and nothing else.
func freshBody(t *rapid.T, compact bool, evs []match.Event) []byte {
	var b DictBatch
	b.SetCompact(compact)
	for _, e := range evs {
		if _, err := b.AddChecked(e); err != nil {
			t.Fatal(err)
		}
	}
	_, body, _, _ := SplitFrame(b.Frame(1), HardMaxFrame)
	return body
}
