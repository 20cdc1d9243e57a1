package wire

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// decodeModes decodes a Publish body the three ways a decoder can, each
// with a decoder that has already decoded warm (so the name cache and the
// attribute slab are in play): copying (Decode), sharing a copy of the
// body (ShareStrings) and sharing the body itself (DecodeOwnedPublish).
func decodeModes(t *rapid.T, warm, body []byte) map[string][]match.Event {
	out := map[string][]match.Event{}
	for _, mode := range []string{"copy", "shared", "owned"} {
		d := EventDecoder{ShareStrings: mode == "shared"}
		if _, err := d.Decode(TypePublish, warm); err != nil {
			t.Fatalf("%s: warm-up: %v", mode, err)
		}
		var m Message
		var err error
		if mode == "owned" {
			m, err = d.DecodeOwnedPublish(bytes.Clone(body))
		} else {
			m, err = d.Decode(TypePublish, bytes.Clone(body))
		}
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		out[mode] = m.(*Publish).Events
	}
	return out
}

// TestDecodeModesAgree: whatever the mode and whatever the decoder decoded
// before (the names of the previous event are reused by position), a
// batch of events decodes to the events encoded.
func TestDecodeModesAgree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		warm := genEvents(t, "warm", "w", 1, 4)
		evs := genEvents(t, "n", "e", 0, 6)
		warmBody := (&Publish{Seq: 1, Events: warm}).AppendBody(nil)
		body := (&Publish{Seq: 2, Events: evs}).AppendBody(nil)
		for mode, got := range decodeModes(t, warmBody, body) {
			if len(got) != len(evs) {
				t.Fatalf("%s: %d events, want %d", mode, len(got), len(evs))
			}
			for i := range evs {
				if !got[i].Equal(evs[i]) {
					t.Fatalf("%s: event %d = %v, want %v", mode, i, got[i], evs[i])
				}
			}
		}
	})
}

// TestCopiedEventsOwnTheirStrings: events decoded without sharing keep no
// reference to the body, so a reused frame buffer (ReadFrameReuse) may be
// overwritten while the events live on.
func TestCopiedEventsOwnTheirStrings(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ev := genEvent(t, "e")
		d := &Deliver{Items: []DeliverItem{{Subs: []uint64{1}, Event: ev}, {Subs: []uint64{2, 3}, Event: ev}}}
		body := d.AppendBody(nil)
		var dec EventDecoder
		m, err := dec.Decode(TypeDeliver, body)
		if err != nil {
			t.Fatal(err)
		}
		for i := range body {
			body[i] = 0xff
		}
		for _, it := range m.(*Deliver).Items {
			if !it.Event.Equal(ev) {
				t.Fatalf("after overwriting the body: %v, want %v", it.Event, ev)
			}
		}
	})
}

// TestNameCacheStillChecks: a name that differs from the previous event's
// name at the same position is checked as if new: invalid names and names
// out of order are refused even after a valid event warmed the cache.
func TestNameCacheStillChecks(t *testing.T) {
	good := AppendEvent(nil, match.MustEvent(
		match.Attr{Name: "a", Value: match.Int(1)},
		match.Attr{Name: "b", Value: match.Int(2)},
	))
	for _, tc := range []struct {
		name string
		ev   []byte
		want string
	}{
		{"invalid", []byte{1, 2, '1', 'a', tagInt, 2}, "invalid attribute name"},
		{"swapped", []byte{2, 1, 'b', tagInt, 2, 1, 'a', tagInt, 2}, "strictly increasing"},
		{"repeated", []byte{2, 1, 'a', tagInt, 2, 1, 'a', tagInt, 2}, "strictly increasing"},
	} {
		var d EventDecoder
		if _, err := d.DecodeEvent(good); err != nil {
			t.Fatalf("%s: warm-up: %v", tc.name, err)
		}
		if _, err := d.DecodeEvent(tc.ev); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
		if e, err := d.DecodeEvent(good); err != nil || e.Len() != 2 {
			t.Errorf("%s: the decoder is unusable after a refusal: %v %v", tc.name, e, err)
		}
	}
}

// TestDecodeOwnedPublishBadInput: the owned path refuses what Decode
// refuses, with the same message.
func TestDecodeOwnedPublishBadInput(t *testing.T) {
	ev := AppendEvent(nil, match.MustEvent(match.Attr{Name: "a", Value: match.Str("x")}))
	for _, body := range [][]byte{
		nil,
		{1},
		{1, 1},
		append([]byte{1, 1}, ev[:len(ev)-1]...),
		append(append([]byte{1, 1}, ev...), 0),
		{1, 1, 1, 1, 'a', tagString, 1, 0xff},
	} {
		_, want := Decode(TypePublish, body)
		var d EventDecoder
		_, got := d.DecodeOwnedPublish(body)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("body %x: owned %v, Decode %v", body, got, want)
		}
	}
}

// TestReadFrameReuse: reading with a reused buffer yields the frames
// ReadFrame yields, and the same refusals.
func TestReadFrameReuse(t *testing.T) {
	var stream []byte
	for _, f := range seedFrames() {
		stream = append(stream, f...)
	}
	a, b := NewFrameReader(bytes.NewReader(stream), 0), NewFrameReader(bytes.NewReader(stream), 0)
	for i := 0; ; i++ {
		ta, ba, ea := a.ReadFrame()
		tb, bb, eb := b.ReadFrameReuse()
		if ea != eb || ta != tb || !bytes.Equal(ba, bb) {
			t.Fatalf("frame %d: ReadFrame %v %x %v, ReadFrameReuse %v %x %v", i, ta, ba, ea, tb, bb, eb)
		}
		if ea != nil {
			break
		}
	}
	for _, bad := range [][]byte{{0, 0, 0, 0}, {0, 0, 0, 9, 1}, {0, 1, 0, 0}} {
		_, _, want := NewFrameReader(bytes.NewReader(bad), 16).ReadFrame()
		_, _, got := NewFrameReader(bytes.NewReader(bad), 16).ReadFrameReuse()
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%x: ReadFrameReuse %v, ReadFrame %v", bad, got, want)
		}
	}
}

// slowDecodeEvent is the reference for the fast path: DecodeEvent with
// every attribute read by the reader (EventDecoder.attr), as before the
// fast path existed.
func slowDecodeEvent(b []byte) (match.Event, error) {
	var d EventDecoder
	r := reader{b: b}
	n := r.count("attribute count", 4)
	if r.err == nil && n > MaxEventAttrs {
		r.fail("event has %d attributes, more than %d", n, MaxEventAttrs)
	}
	if r.err != nil {
		return match.Event{}, r.err
	}
	attrs := make([]match.Attr, n)
	for i := range attrs {
		d.attr(&r, i, &attrs[i])
		if r.err != nil {
			return match.Event{}, r.err
		}
		if i > 0 && attrs[i-1].Name >= attrs[i].Name {
			r.fail("attribute %s: names not in strictly increasing order (after %s)", attrs[i].Name, attrs[i-1].Name)
			return match.Event{}, r.err
		}
	}
	d.setStrings(attrs)
	if err := r.end("event"); err != nil {
		return match.Event{}, err
	}
	return match.NewTrustedEvent(attrs), nil
}

// FuzzEventFastPath: the decoder (fast path, reader fallback) accepts
// exactly what the reader alone accepts, with the same event or the same
// error message.
func FuzzEventFastPath(f *testing.F) {
	f.Add(AppendEvent(nil, match.MustEvent(match.Attr{Name: "a", Value: match.Str("x")}, match.Attr{Name: "b", Value: match.MustFloat(1.5)})))
	f.Add([]byte{2, 1, 'a', tagInt, 0x80, 0x80, 1, 1, 'b', tagBool, 2})
	f.Add([]byte{1, 1, 'a', tagFloat, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f})
	f.Add([]byte{1, 1, 'a', tagString, 2, 0xc3, 0x28})
	f.Add([]byte{2, 1, 'b', tagInt, 2, 1, 'a', tagInt, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gotErr := DecodeEvent(data)
		want, wantErr := slowDecodeEvent(data)
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("errors differ: fast path %v, reader %v", gotErr, wantErr)
		}
		if gotErr == nil && !got.Equal(want) {
			t.Fatalf("events differ: fast path %v, reader %v", got, want)
		}
	})
}

// TestReadIDsAgreesWithUvarint: readIDs, with its inline one- and
// two-byte paths, reads what binary.Uvarint reads id after id (overlong
// encodings included), and fails where it fails.
func TestReadIDsAgreesWithUvarint(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.SampledFrom([]byte{0, 1, 0x7f, 0x80, 0x81, 0xff}), 0, 24).Draw(t, "bytes")
		k := rapid.IntRange(1, 8).Draw(t, "ids")
		var want []uint64
		rest, ok := b, true
		for range k {
			v, n := binary.Uvarint(rest)
			if n <= 0 {
				ok = false
				break
			}
			want, rest = append(want, v), rest[n:]
		}
		r := reader{b: b}
		got := make([]uint64, k)
		if gotOK := readIDs(&r, got); gotOK != ok || (r.err == nil) != ok {
			t.Fatalf("readIDs %x: %v (err %v), Uvarint ok %v", b, gotOK, r.err, ok)
		}
		if ok && (!slices.Equal(got, want) || !bytes.Equal(r.b, rest)) {
			t.Fatalf("readIDs %x: %v rest %x, Uvarint %v rest %x", b, got, r.b, want, rest)
		}
	})
}

// TestValidUTF8AgreesWithStdlib: the ASCII fast paths answer what
// utf8.Valid and utf8.ValidString answer, for bytes around the ASCII
// boundary at every position and length (whole words, tails).
func TestValidUTF8AgreesWithStdlib(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := rapid.SliceOfN(rapid.SampledFrom([]byte{'a', 0x7f, 0x80, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xff}), 0, 40).Draw(t, "bytes")
		if got, want := validUTF8(p), utf8.Valid(p); got != want {
			t.Fatalf("validUTF8(%x) = %v, want %v", p, got, want)
		}
		if got, want := validUTF8String(string(p)), utf8.Valid(p); got != want {
			t.Fatalf("validUTF8String(%x) = %v, want %v", p, got, want)
		}
	})
}

// TestFastPathLongLengths: names and strings whose length prefix takes
// more than one byte (fastBytes) decode as the reader decodes them, in
// every way a decoder decodes.
func TestFastPathLongLengths(t *testing.T) {
	for _, n := range []int{127, 128, 300, arenaMax, arenaMax + 1, 20000} {
		e := match.MustEvent(
			match.Attr{Name: "a" + strings.Repeat("b", n%200), Value: match.Str(strings.Repeat("é", n/2))},
			match.Attr{Name: "z", Value: match.Str(strings.Repeat("x", n))},
		)
		raw := AppendEvent(nil, e)
		want, werr := slowDecodeEvent(raw)
		got, gerr := DecodeEvent(raw)
		if werr != nil || gerr != nil || !got.Equal(want) || !got.Equal(e) {
			t.Fatalf("length %d: fast path %v (%v), reader %v (%v), want %v", n, got, gerr, want, werr, e)
		}
		var d EventDecoder
		body := (&Deliver{Items: []DeliverItem{{Subs: []uint64{1}, Event: e}}}).AppendBody(nil)
		if err := d.DecodeBorrowedDeliver(body, func(_ []uint64, b match.Event) {
			if !b.Equal(e) {
				t.Fatalf("length %d: borrowed %v, want %v", n, b, e)
			}
		}); err != nil {
			t.Fatal(err)
		}
		m, err := d.DecodeOwnedPublish((&Publish{Events: []match.Event{e}}).AppendBody(nil))
		if err != nil || !m.Events[0].Equal(e) {
			t.Fatalf("length %d: owned publish %v (%v), want %v", n, m, err, e)
		}
	}
}
