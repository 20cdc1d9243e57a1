package wire

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// restrict returns e without the attributes w does not hold.
func restrict(e match.Event, w *Wanted) match.Event {
	var attrs []match.Attr
	for i := range e.Len() {
		if a := e.At(i); w.Has(a.Name) {
			attrs = append(attrs, a)
		}
	}
	return match.MustEvent(attrs...)
}

// genWanted draws a set of names (nil: all), mostly from the names events
// use, sometimes with others.
func genWanted(t *rapid.T, label string) *Wanted {
	if rapid.IntRange(0, 9).Draw(t, label+".all") == 0 {
		return nil
	}
	pool := append([]string{"zz", "a0", "x_y"}, attrNames...)
	return NewWanted(rapid.SliceOfN(rapid.SampledFrom(pool), 0, 6).Draw(t, label))
}

// mangle damages an encoding now and then: a truncation, a changed byte
// or trailing garbage, so that errors are compared as well.
func mangle(t *rapid.T, b []byte) []byte {
	b = bytes.Clone(b)
	switch rapid.IntRange(0, 3).Draw(t, "mangle") {
	case 1:
		if len(b) > 0 {
			b = b[:rapid.IntRange(0, len(b)-1).Draw(t, "cut")]
		}
	case 2:
		if len(b) > 0 {
			b[rapid.IntRange(0, len(b)-1).Draw(t, "at")] = rapid.Byte().Draw(t, "byte")
		}
	case 3:
		b = append(b, rapid.Byte().Draw(t, "extra"))
	}
	return b
}

// decodeWith decodes a Publish body copying or (owned) sharing it, with
// decoder d.
func decodeWith(d *EventDecoder, owned bool, body []byte) ([]match.Event, error) {
	if owned {
		m, err := d.DecodeOwnedPublish(bytes.Clone(body))
		if err != nil {
			return nil, err
		}
		return m.Events, nil
	}
	m, err := d.Decode(TypePublish, bytes.Clone(body))
	if err != nil {
		return nil, err
	}
	return m.(*Publish).Events, nil
}

// TestWantedIsFullDecodeRestricted: for random (sometimes damaged) batches
// and wanted sets, and a decoder that has decoded other batches under
// another set before (its per-position caches in play), decoding with
// Wanted gives the full decode's events restricted to the wanted names,
// and refuses exactly the batches the full decode refuses, with the same
// error.
func TestWantedIsFullDecodeRestricted(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		warm := genEvents(t, "warm", "w", 0, 3)
		evs := genEvents(t, "n", "e", 0, 5)
		warmBody := (&Publish{Seq: 1, Events: warm}).AppendBody(nil)
		body := mangle(t, (&Publish{Seq: 2, Events: evs}).AppendBody(nil))
		owned := rapid.Bool().Draw(t, "owned")
		var full EventDecoder
		want, wantErr := decodeWith(&full, owned, body)

		d := EventDecoder{Wanted: genWanted(t, "before")}
		if _, err := decodeWith(&d, owned, warmBody); err != nil {
			t.Fatalf("warm-up: %v", err)
		}
		w := genWanted(t, "wanted")
		d.Wanted = w
		got, gotErr := decodeWith(&d, owned, body)
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("errors differ: wanted %v: %v, full: %v", w, gotErr, wantErr)
		}
		if len(got) != len(want) {
			t.Fatalf("%d events, full decode %d", len(got), len(want))
		}
		for i := range want {
			if r := restrict(want[i], w); !got[i].Equal(r) {
				t.Fatalf("wanted %v: event %d = %v, want %v", w, i, got[i], r)
			}
		}
	})
}

func TestWantedNilIsAll(t *testing.T) {
	var w *Wanted
	if !w.Has("anything") || w.String() != "all" || w.Names() != nil {
		t.Fatalf("nil Wanted: Has %v, String %q, Names %v", w.Has("anything"), w, w.Names())
	}
	s := NewWanted([]string{"b", "a", "b"})
	if got := s.String(); got != "{a,b}" {
		t.Fatalf("NewWanted(b,a,b) = %s, want {a,b}", got)
	}
	if s.Has("c") || !s.Has("a") {
		t.Fatalf("%s: Has(c) %v, Has(a) %v", s, s.Has("c"), s.Has("a"))
	}
}

// FuzzEventWanted: for arbitrary bytes and a wanted set taken from the
// fuzzer's names, decoding with Wanted accepts exactly what the full
// decoder accepts, with the same error, and keeps exactly the wanted
// attributes of the full decode.
func FuzzEventWanted(f *testing.F) {
	f.Add(AppendEvent(nil, match.MustEvent(match.Attr{Name: "a", Value: match.Str("x")}, match.Attr{Name: "b", Value: match.MustFloat(1.5)})), "a")
	f.Add([]byte{2, 1, 'a', tagInt, 2, 1, 'b', tagBool, 1}, "b c")
	f.Add([]byte{1, 1, 'a', tagString, 2, 0xc3, 0x28}, "")
	f.Add([]byte{2, 1, 'b', tagInt, 2, 1, 'a', tagInt, 2}, "a b")
	f.Fuzz(func(t *testing.T, data []byte, names string) {
		w := NewWanted(strings.Fields(names))
		full, fullErr := DecodeEvent(data)
		d := EventDecoder{Wanted: w}
		d.DecodeEvent(data) // warm: the per-position caches in play
		got, err := d.DecodeEvent(data)
		if (err == nil) != (fullErr == nil) || err != nil && err.Error() != fullErr.Error() {
			t.Fatalf("errors differ: wanted %v: %v, full: %v", w, err, fullErr)
		}
		if err == nil && !got.Equal(restrict(full, w)) {
			t.Fatalf("wanted %v: %v, full decode %v", w, got, full)
		}
	})
}

// BenchmarkDecodeWanted decodes a batch of 64 events of 8 attributes as a
// router does (DecodeOwnedPublish), keeping all of them or only symbol.
func BenchmarkDecodeWanted(b *testing.B) {
	evs := make([]match.Event, 64)
	for i := range evs {
		evs[i] = match.MustEvent(
			match.Attr{Name: "exchange", Value: match.Str("NYSE")},
			match.Attr{Name: "price", Value: match.MustFloat(float64(i) + 0.5)},
			match.Attr{Name: "seq", Value: match.Int(int64(i))},
			match.Attr{Name: "source", Value: match.Str("feed-handler-7")},
			match.Attr{Name: "symbol", Value: match.Str("SYM" + strings.Repeat("x", i%5))},
			match.Attr{Name: "trader", Value: match.Str("t-0042")},
			match.Attr{Name: "urgent", Value: match.Bool(i%2 == 0)},
			match.Attr{Name: "volume", Value: match.Int(int64(100 * i))},
		)
	}
	body := (&Publish{Seq: 1, Events: evs}).AppendBody(nil)
	for _, w := range []*Wanted{nil, NewWanted([]string{"symbol"})} {
		b.Run("wanted="+w.String(), func(b *testing.B) {
			d := EventDecoder{Wanted: w}
			bodies := make([][]byte, 256)
			for i := range bodies {
				bodies[i] = bytes.Clone(body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := d.DecodeOwnedPublish(bodies[i%len(bodies)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
