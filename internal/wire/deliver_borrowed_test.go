package wire

import (
	"bytes"
	"runtime"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

func genDeliver(t *rapid.T, label string) *Deliver {
	m := &Deliver{}
	for i := range rapid.IntRange(0, 6).Draw(t, label+" items") {
		subs := rapid.SliceOfN(rapid.Uint64(), 1, 5).Draw(t, label+" subs")
		m.Items = append(m.Items, DeliverItem{Subs: subs, Event: genEvent(t, label+string(rune('0'+i)))})
	}
	return m
}

// borrowAll decodes body with DecodeBorrowedDeliver, copying each item
// during its call (the ids, and the event re-encoded: borrowed memory is
// reused for the next item).
func borrowAll(d *EventDecoder, body []byte) (*Deliver, error) {
	m := &Deliver{}
	err := d.DecodeBorrowedDeliver(body, func(subs []uint64, e match.Event) {
		kept, err := DecodeEvent(AppendEvent(nil, e))
		if err != nil {
			panic(err) // a decoded event always re-encodes
		}
		m.Items = append(m.Items, DeliverItem{Subs: slices.Clone(subs), Event: kept})
	})
	return m, err
}

// TestBorrowedDeliverAgrees: frame after frame on one decoder (its memory
// reused, its name cache warm, Decode calls in between),
// DecodeBorrowedDeliver hands over the items Decode returns, and refuses a
// cut body with Decode's error after handing over at most the items
// before the cut.
func TestBorrowedDeliverAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var d EventDecoder
		for f := range rapid.IntRange(1, 5).Draw(t, "frames") {
			m := genDeliver(t, "f"+string(rune('0'+f)))
			body := m.AppendBody(nil)
			if rapid.Bool().Draw(t, "cut") && len(body) > 0 {
				body = body[:rapid.IntRange(0, len(body)-1).Draw(t, "at")]
			}
			want, werr := Decode(TypeDeliver, body)
			got, gerr := borrowAll(&d, body)
			if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
				t.Fatalf("errors differ: Decode %v, borrowed %v", werr, gerr)
			}
			full := m.Items
			if werr == nil {
				full = want.(*Deliver).Items
			}
			if len(got.Items) > len(full) || !bytes.Equal((&Deliver{Items: got.Items}).AppendBody(nil), (&Deliver{Items: full[:len(got.Items)]}).AppendBody(nil)) {
				t.Fatalf("borrowed %v, want a prefix of %v", got.Items, full)
			}
			if werr == nil && len(got.Items) != len(full) {
				t.Fatalf("borrowed %d items, want %d", len(got.Items), len(full))
			}
			if rapid.Bool().Draw(t, "decode between") { // the other modes' state is left alone
				if _, err := d.Decode(TypeDeliver, m.AppendBody(nil)); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// TestBorrowedDeliverAllocatesStringBytesOnly: once warm, decoding frames
// of 200 events allocates their string values' bytes, in shared chunks,
// and nothing else: less than one allocation per frame (Decode allocates
// twice per event), and about as many bytes as the values hold.
func TestBorrowedDeliverAllocatesStringBytesOnly(t *testing.T) {
	m := &Deliver{}
	for i := range 200 {
		m.Items = append(m.Items, DeliverItem{Subs: []uint64{1, uint64(i + 2)}, Event: match.MustEvent(
			match.Attr{Name: "i", Value: match.Int(int64(i))},
			match.Attr{Name: "note", Value: match.Str("some text")},
			match.Attr{Name: "symbol", Value: match.Str("IBM")},
		)})
	}
	const valueBytes = 200 * len("some text"+"IBM")
	body := m.AppendBody(nil)
	var d EventDecoder
	n := 0
	count := func([]uint64, match.Event) { n++ }
	decode := func() {
		if err := d.DecodeBorrowedDeliver(body, count); err != nil {
			t.Fatal(err)
		}
	}
	if got := testing.AllocsPerRun(20, decode); got >= 1 {
		t.Fatalf("%v allocations per frame, want less than 1", got)
	}
	if n != 21*200 { // AllocsPerRun runs once more to warm up
		t.Fatalf("%d items handed over, want %d", n, 21*200)
	}
	const frames = 100
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range frames {
		decode()
	}
	runtime.ReadMemStats(&after)
	// A chunk's unused tail is at most arenaMax: 1/16 of it.
	if got, want := after.TotalAlloc-before.TotalAlloc, uint64(frames*valueBytes*17/16+arenaChunk); got > want {
		t.Fatalf("%d frames allocated %d bytes, want at most %d (their string values hold %d)", frames, got, want, frames*valueBytes)
	}
}

// FuzzBorrowedDeliver: for any body, DecodeBorrowedDeliver (on a decoder
// warm from the previous inputs, its memory reused) refuses what
// Decode(TypeDeliver) refuses with the same error, and otherwise hands
// over items that encode to Decode's bytes.
func FuzzBorrowedDeliver(f *testing.F) {
	for _, s := range seedFrames() {
		if typ, body, _, err := SplitFrame(s, HardMaxFrame); err == nil && typ == TypeDeliver {
			f.Add(body)
		}
	}
	var d EventDecoder // shared by the inputs: warm, reused
	f.Fuzz(func(t *testing.T, body []byte) {
		want, werr := Decode(TypeDeliver, body)
		for range 2 {
			got, gerr := borrowAll(&d, body)
			if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
				t.Fatalf("errors differ: Decode %v, borrowed %v", werr, gerr)
			}
			if werr == nil && !bytes.Equal(AppendFrame(nil, got), AppendFrame(nil, want)) {
				t.Fatalf("borrowed decodes to %v, Decode to %v", got.Items, want.(*Deliver).Items)
			}
		}
	})
}

// TestBorrowedDeliverStringsOutliveBody: a string kept from a borrowed
// event is not the caller's buffer: overwriting the body and decoding
// another frame leave it unchanged.
func TestBorrowedDeliverStringsOutliveBody(t *testing.T) {
	frame := func(sym string) []byte {
		m := &Deliver{Items: []DeliverItem{{Subs: []uint64{1}, Event: match.MustEvent(
			match.Attr{Name: "symbol", Value: match.Str(sym)},
		)}}}
		return m.AppendBody(nil)
	}
	var d EventDecoder
	var kept, name string
	body := frame("IBM")
	if err := d.DecodeBorrowedDeliver(body, func(_ []uint64, e match.Event) {
		name = e.At(0).Name
		kept = e.At(0).Value.AsString()
	}); err != nil {
		t.Fatal(err)
	}
	copy(body, frame("XYZ")) // the caller reuses its buffer
	if err := d.DecodeBorrowedDeliver(body, func([]uint64, match.Event) {}); err != nil {
		t.Fatal(err)
	}
	if kept != "IBM" || name != "symbol" {
		t.Fatalf("kept %q=%q after the body was reused, want symbol=IBM", name, kept)
	}
}

// TestBorrowedDeliverReentrantDecode: a callback may decode with the same
// decoder (Decode, owned): what it decodes is owned, unchanged by the rest
// of the borrowed frame, and the borrowed items after the call are still
// right.
func TestBorrowedDeliverReentrantDecode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		outer, inner := genDeliver(t, "outer"), genDeliver(t, "inner")
		innerBody := inner.AppendBody(nil)
		var d EventDecoder
		var owned []*Deliver
		got := &Deliver{}
		err := d.DecodeBorrowedDeliver(outer.AppendBody(nil), func(subs []uint64, e match.Event) {
			got.Items = append(got.Items, DeliverItem{Subs: slices.Clone(subs), Event: mustReencode(e)})
			m, err := d.Decode(TypeDeliver, innerBody)
			if err != nil {
				panic(err)
			}
			owned = append(owned, m.(*Deliver))
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.AppendBody(nil), outer.AppendBody(nil)) {
			t.Fatalf("borrowed %v, want %v", got.Items, outer.Items)
		}
		for i, m := range owned {
			if !bytes.Equal(m.AppendBody(nil), innerBody) {
				t.Fatalf("owned decode %d changed: %v, want %v", i, m.Items, inner.Items)
			}
		}
	})
}

// mustReencode copies a borrowed event by encoding and decoding it.
func mustReencode(e match.Event) match.Event {
	kept, err := DecodeEvent(AppendEvent(nil, e))
	if err != nil {
		panic(err) // a decoded event always re-encodes
	}
	return kept
}
