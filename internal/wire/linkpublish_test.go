package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestLinkPublishRoundTrip checks that a batch built with LinkPublishBatch
// is the frame AppendFrame makes of the same message, and that both
// decoders give back the events, their raw spans and the witnesses.
func TestLinkPublishRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		events := genEvents(t, "events", "e", 1, 6)
		witness := rapid.SliceOfN(rapid.Uint64(), len(events), len(events)).Draw(t, "witness")
		seq := rapid.Uint64().Draw(t, "seq")
		var batch LinkPublishBatch
		for round := range 2 { // the second round reuses the batch's buffers
			batch.Reset()
			for i, e := range events {
				batch.AddRaw(AppendEvent(nil, e), witness[i])
			}
			if batch.Len() != len(events) {
				t.Fatalf("round %d: Len %d, want %d", round, batch.Len(), len(events))
			}
			frame := batch.Frame(seq)
			want := AppendFrame(nil, &LinkPublish{Publish: Publish{Seq: seq, Events: events}, Witness: witness})
			if !bytes.Equal(frame, want) {
				t.Fatalf("round %d: batch frame differs from AppendFrame:\n%x\n%x", round, frame, want)
			}
			typ, body, _, err := SplitFrame(frame, 0)
			if err != nil || typ != TypeLinkPublish {
				t.Fatalf("split: %v %v", typ, err)
			}
			var d EventDecoder
			m, err := d.DecodeOwnedLinkPublish(bytes.Clone(body))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			checkLinkPublish(t, m, seq, events, witness)
			generic, err := Decode(typ, body)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			checkLinkPublish(t, generic.(*LinkPublish), seq, events, witness)
		}
	})
}

func checkLinkPublish(t *rapid.T, m *LinkPublish, seq uint64, events []match.Event, witness []uint64) {
	if m.Seq != seq || len(m.Events) != len(events) || len(m.Raw) != len(events) {
		t.Fatalf("got seq %d, %d events, %d raw; want %d, %d", m.Seq, len(m.Events), len(m.Raw), seq, len(events))
	}
	for i, e := range events {
		if !m.Events[i].Equal(e) || !bytes.Equal(m.Raw[i], AppendEvent(nil, e)) || m.Witness[i] != witness[i] {
			t.Fatalf("entry %d: %v %x %x, want %v %x", i, m.Events[i], m.Raw[i], m.Witness[i], e, witness[i])
		}
	}
}

// TestLinkPublishBadInput: witnesses that do not match the events are
// malformed, as is everything a Publish body refuses.
func TestLinkPublishBadInput(t *testing.T) {
	ev := AppendEvent(nil, match.MustEvent(match.Attr{Name: "a", Value: match.Int(1)}))
	one := append([]byte{1, 1}, ev...)
	cases := []struct {
		name string
		body []byte
		msg  string
	}{
		{"no witness", one, "0 bytes of witnesses for 1 events"},
		{"short witness", append(bytes.Clone(one), 1, 2, 3), "3 bytes of witnesses"},
		{"extra witness", append(bytes.Clone(one), make([]byte, 16)...), "16 bytes of witnesses"},
		{"bad event", []byte{1, 1, 1, 1, '9', tagInt, 2, 0, 0, 0, 0, 0, 0, 0, 0}, "invalid attribute name"},
		{"huge count", []byte{1, 0xff, 0xff, 0x03}, "could hold"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d EventDecoder
			_, err := d.DecodeOwnedLinkPublish(c.body)
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Code != CodeMalformed || !strings.Contains(pe.Msg, c.msg) {
				t.Fatalf("got %v, want malformed with %q", err, c.msg)
			}
		})
	}
}

// TestFilterHash: the witness of a text is stable, never 0, and differs
// between the texts of a small corpus.
func TestFilterHash(t *testing.T) {
	if got, want := FilterHash(""), uint64(14695981039346656037); got != want {
		t.Fatalf("FilterHash(\"\") = %d, want the FNV-1a offset %d", got, want)
	}
	if got, want := FilterHash("a"), uint64(0xaf63dc4c8601ec8c); got != want {
		t.Fatalf("FilterHash(\"a\") = %#x, want FNV-1a %#x", got, want)
	}
	seen := map[uint64]string{}
	for _, s := range []string{`price > 1`, `price > 10`, `price >= 1`, `symbol == "IBM"`, `symbol == "IBM" && price < 5`} {
		h := FilterHash(s)
		if h == 0 {
			t.Fatalf("FilterHash(%q) = 0", s)
		}
		if prev, dup := seen[h]; dup {
			t.Fatalf("%q and %q share a witness", s, prev)
		}
		seen[h] = s
	}
}

// FuzzLinkPublish feeds arbitrary link-publish bodies to both decoders:
// never a panic, the same verdict, and whatever decodes re-encodes stably.
func FuzzLinkPublish(f *testing.F) {
	ev := match.MustEvent(match.Attr{Name: "price", Value: match.MustFloat(9.5)}, match.Attr{Name: "symbol", Value: match.Str("IBM")})
	f.Add((&LinkPublish{Publish: Publish{Seq: 1, Events: []match.Event{ev, ev}}, Witness: []uint64{0, 7}}).AppendBody(nil))
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		var d EventDecoder
		owned, err := d.DecodeOwnedLinkPublish(bytes.Clone(body))
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)+1))
		frame = append(append(frame, byte(TypeLinkPublish)), body...)
		_, _, once, ok := checkFrame(t, frame)
		if (err == nil) != ok {
			t.Fatalf("DecodeOwnedLinkPublish says %v, Decode says ok=%v", err, ok)
		}
		if ok && !bytes.Equal(AppendFrame(nil, owned), once) {
			t.Fatalf("DecodeOwnedLinkPublish decodes differently")
		}
	})
}

// TestLinkPublishBatchGrowsAfterFrame: a batch may take more events after
// Frame, like PublishBatch: the next frame holds every event with its own
// witness (the witnesses of the first frame must not end up among the
// events), and Frame called twice gives the same frame.
func TestLinkPublishBatchGrowsAfterFrame(t *testing.T) {
	e1 := match.MustEvent(match.Attr{Name: "a", Value: match.Int(1)})
	e2 := match.MustEvent(match.Attr{Name: "b", Value: match.Str("x")})
	var batch LinkPublishBatch
	batch.AddRaw(AppendEvent(nil, e1), 11)
	first := bytes.Clone(batch.Frame(1))
	if again := batch.Frame(1); !bytes.Equal(again, first) {
		t.Fatalf("Frame twice: %x, then %x", first, again)
	}
	batch.AddRaw(AppendEvent(nil, e2), 22)
	if got, want := batch.Size(), len(AppendEvent(nil, e1))+len(AppendEvent(nil, e2))+16; got != want {
		t.Fatalf("Size %d, want %d", got, want)
	}
	frame := batch.Frame(2)
	want := AppendFrame(nil, &LinkPublish{Publish: Publish{Seq: 2, Events: []match.Event{e1, e2}}, Witness: []uint64{11, 22}})
	if !bytes.Equal(frame, want) {
		t.Fatalf("after Frame and AddRaw: frame\n%x\nwant\n%x", frame, want)
	}
}
