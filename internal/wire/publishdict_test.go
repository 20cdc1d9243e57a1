package wire

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// dictBody builds a PublishDict body of evs with a DictBatch, checking
// that AddChecked reports each event's plain size.
func dictBody(t interface{ Fatalf(string, ...any) }, seq uint64, evs []match.Event) (body []byte, plain int) {
	return batchBody(t, seq, evs, false)
}

// batchBody builds a PublishDict body of evs (a PublishCompact one if
// compact) with a DictBatch, checking that AddChecked reports each
// event's plain size.
func batchBody(t interface{ Fatalf(string, ...any) }, seq uint64, evs []match.Event, compact bool) (body []byte, plain int) {
	var b DictBatch
	b.SetCompact(compact)
	for _, e := range evs {
		n, err := b.AddChecked(e)
		if err != nil {
			t.Fatalf("add %v: %v", e, err)
		}
		if want := len(AppendEvent(nil, e)); n != want {
			t.Fatalf("plain size of %v = %d, want %d", e, n, want)
		}
	}
	want := TypePublishDict
	if compact {
		want = TypePublishCompact
	}
	typ, body, _, err := SplitFrame(b.Frame(seq), HardMaxFrame)
	if err != nil || typ != want {
		t.Fatalf("frame: %v, %v", typ, err)
	}
	return body, b.Size()
}

// TestPublishDictExpandsToPublish: a batch of any events, built by
// DictBatch or by PublishDict's AppendBody, expands to exactly the
// Publish body of the same events, and decodes to those events.
func TestPublishDictExpandsToPublish(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { checkExpandsToPublish(t, genEvents(t, "n", "e", 1, 8), false) })
}

// checkExpandsToPublish checks that a PublishDict batch of evs (a
// PublishCompact one if compact), built by DictBatch or by AppendBody,
// expands to exactly their Publish body and decodes, in every mode, to
// evs with their plain encodings as Raw (and, if compact, the same
// encodings: every float's bits).
func checkExpandsToPublish(t *rapid.T, evs []match.Event, compact bool) {
	seq := rapid.Uint64().Draw(t, "seq")
	body, plain := batchBody(t, seq, evs, compact)
	want := (&Publish{Seq: seq, Events: evs}).AppendBody(nil)
	typ, again := TypePublishDict, (&PublishDict{Publish{Seq: seq, Events: evs}}).AppendBody(nil)
	expand, decodeOwned := ExpandPublishDict, (*EventDecoder).DecodeOwnedPublishDict
	if compact {
		typ, again = TypePublishCompact, (&PublishCompact{Publish{Seq: seq, Events: evs}}).AppendBody(nil)
		expand, decodeOwned = ExpandPublishCompact, (*EventDecoder).DecodeOwnedPublishCompact
	}
	if !bytes.Equal(again, body) {
		t.Fatalf("AppendBody and DictBatch differ:\n%x\n%x", again, body)
	}
	got, err := expand(nil, body, HardMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("expansion\n%x\nwant\n%x", got, want)
	}
	if head := len(want) - plain; head < 2 {
		t.Fatalf("Size %d leaves %d bytes for the head of a %d-byte body", plain, head, len(want))
	}
	for _, mode := range []string{"decode", "shared", "owned"} {
		d := EventDecoder{ShareStrings: mode == "shared"}
		var p *Publish
		if mode == "owned" {
			p, err = decodeOwned(&d, bytes.Clone(body), HardMaxFrame)
		} else {
			var m Message
			m, err = d.Decode(typ, bytes.Clone(body))
			if err == nil {
				p = publishOf(m)
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if p.Seq != seq || len(p.Events) != len(evs) {
			t.Fatalf("%s: seq %d, %d events", mode, p.Seq, len(p.Events))
		}
		for i := range evs {
			if !p.Events[i].Equal(evs[i]) || !bytes.Equal(p.RawAt(i), AppendEvent(nil, evs[i])) ||
				compact && !bytes.Equal(AppendEvent(nil, p.Events[i]), AppendEvent(nil, evs[i])) {
				t.Fatalf("%s: event %d = %v (raw %x), want %v", mode, i, p.Events[i], p.RawAt(i), evs[i])
			}
		}
	}
}

// publishOf is the Publish a decoded PublishDict or PublishCompact holds.
func publishOf(m Message) *Publish {
	if c, ok := m.(*PublishCompact); ok {
		return &c.Publish
	}
	return &m.(*PublishDict).Publish
}

// TestPublishDictWritesNamesOnce: a frame of events with the same names
// writes each name once, so it is smaller than the plain frame by about
// the names of every event but the first.
func TestPublishDictWritesNamesOnce(t *testing.T) {
	ev := vectorEvent(t)
	var evs []match.Event
	for range 100 {
		evs = append(evs, ev)
	}
	body, plain := dictBody(t, 1, evs)
	names := 0
	for i := range ev.Len() {
		names += len(ev.At(i).Name)
	}
	// Per event after the first: each name's length byte and bytes become
	// a one-byte reference; the first event's names each take a reference
	// 0 before them.
	if want := plain - 99*names + ev.Len(); len(body)-2 != want {
		t.Fatalf("body of %d bytes (events %d), want events of %d", len(body), len(body)-2, want)
	}
}

// TestDictBatchUndo: taking back the last event leaves the batch (frame
// and dictionary) as if it had never been added, whatever names it
// entered.
func TestDictBatchUndo(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkUndo(t, genEvents(t, "n", "e", 1, 6), genEvent(t, "extra"), genEvent(t, "next"), false)
	})
}

// checkUndo checks that a batch of evs (compact or not) to which extra is
// added, taken back, and next added, is the batch of evs and next.
func checkUndo(t *rapid.T, evs []match.Event, extra, next match.Event, compact bool) {
	var b DictBatch
	b.SetCompact(compact)
	for _, e := range evs {
		if _, err := b.AddChecked(e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.AddChecked(extra); err != nil {
		t.Fatal(err)
	}
	b.Undo()
	if _, err := b.AddChecked(next); err != nil {
		t.Fatal(err)
	}
	want, _ := batchBody(t, 1, append(append([]match.Event(nil), evs...), next), compact)
	if _, got, _, _ := SplitFrame(b.Frame(1), HardMaxFrame); !bytes.Equal(got, want) {
		t.Fatalf("after undo\n%x\nwant\n%x", got, want)
	}
}

// TestDictBatchRefusesLikeCheckEvent: an event CheckEvent refuses is
// refused with the same error and leaves the batch unchanged.
func TestDictBatchRefusesLikeCheckEvent(t *testing.T) {
	good := vectorEvent(t)
	bad := match.MustEvent(match.Attr{Name: "new", Value: match.Str("ok")}, match.Attr{Name: "zz", Value: match.Str("\xff")})
	var b DictBatch
	if _, err := b.AddChecked(good); err != nil {
		t.Fatal(err)
	}
	_, err := b.AddChecked(bad)
	if want := CheckEvent(bad); err == nil || err.Error() != want.Error() {
		t.Fatalf("refusal %v, want %v", err, want)
	}
	b.AddChecked(match.MustEvent(match.Attr{Name: "new", Value: match.Int(1)}))
	want, _ := dictBody(t, 1, []match.Event{good, match.MustEvent(match.Attr{Name: "new", Value: match.Int(1)})})
	if _, got, _, _ := SplitFrame(b.Frame(1), HardMaxFrame); !bytes.Equal(got, want) {
		t.Fatalf("after a refusal\n%x\nwant\n%x", got, want)
	}
}

// TestPublishDictFullDictionary: names beyond MaxDictNames are written
// out every time, and the frame still expands to the plain one.
func TestPublishDictFullDictionary(t *testing.T) {
	var evs []match.Event
	for i := range 2*MaxDictNames/1000 + 1 {
		attrs := make([]match.Attr, 1000)
		for j := range attrs {
			attrs[j] = match.Attr{Name: fmt.Sprintf("n%02d_%04d", i, j), Value: match.Int(int64(j))}
		}
		evs = append(evs, match.MustEvent(attrs...), match.MustEvent(attrs...))
	}
	body, _ := dictBody(t, 9, evs)
	got, err := ExpandPublishDict(nil, body, HardMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&Publish{Seq: 9, Events: evs}).AppendBody(nil); !bytes.Equal(got, want) {
		t.Fatal("a frame past the dictionary's bound does not expand to the plain frame")
	}
}

// TestPublishDictBadInput: each malformed body is refused with a
// protocol error saying why, by ExpandPublishDict or by the Publish
// decoder on the expansion.
func TestPublishDictBadInput(t *testing.T) {
	ok := (&PublishDict{Publish{Seq: 1, Events: []match.Event{vectorEvent(t), vectorEvent(t)}}}).AppendBody(nil)
	// seq 1, one event of one attribute: the reference, tag 2, int 1.
	one := func(attr ...byte) []byte { return append([]byte{1, 1, 1}, attr...) }
	cases := []struct {
		name string
		body []byte
		code Code
		want string
	}{
		{"reference beyond the dictionary", one(1, tagInt, 2), CodeMalformed, "reference 1 beyond the frame's 0 names"},
		{"name cut short", one(0, 5, 'p', 'r'), CodeMalformed, "attribute name"},
		{"unknown tag", one(0, 1, 'a', 9, 0), CodeMalformed, "unknown value tag 9"},
		{"value cut short", one(0, 1, 'a', tagFloat, 0, 0), CodeMalformed, "attribute value"},
		{"string cut short", one(0, 1, 'a', tagString, 4, 'x'), CodeMalformed, "string value"},
		{"trailing bytes", append(bytes.Clone(ok), 0), CodeMalformed, "trailing"},
		{"bad name", one(0, 2, '1', '!', tagInt, 2), CodeMalformed, "name"},
		{"names out of order", []byte{1, 1, 2, 0, 1, 'b', tagInt, 2, 0, 1, 'a', tagInt, 2}, CodeMalformed, "order"},
		{"repeated name", []byte{1, 1, 2, 0, 1, 'a', tagInt, 2, 1, tagInt, 2}, CodeMalformed, "order"},
		{"bad string", one(0, 1, 'a', tagString, 1, 0xff), CodeMalformed, "UTF-8"},
		{"too many attributes", append([]byte{1, 1, 0x81, 0x08}, bytes.Repeat([]byte{0, 1, 'a', tagBool, 0}, 1025)...), CodeMalformed, "more than 1024"},
	}
	for _, c := range cases {
		var d EventDecoder
		_, err := d.DecodeOwnedPublishDict(bytes.Clone(c.body), HardMaxFrame)
		if CodeOf(err) != c.code {
			t.Errorf("%s: DecodeOwnedPublishDict says %v, want code %v", c.name, err, c.code)
		}
		if _, err2 := Decode(TypePublishDict, c.body); CodeOf(err2) != c.code || !strings.Contains(err2.Error(), c.want) {
			t.Errorf("%s: Decode (through the expansion) says %v, want code %v saying %q", c.name, err2, c.code, c.want)
		}
	}
	// A long name referred to many times expands past the limit.
	long := strings.Repeat("n", 100)
	body := []byte{1, 100}
	body = append(body, 1, 0, 100)
	body = append(body, long...)
	body = append(body, tagBool, 0)
	for range 99 {
		body = append(body, 1, 1, tagBool, 0)
	}
	if _, err := ExpandPublishDict(nil, body, 5000); CodeOf(err) != CodeFrameTooLarge {
		t.Errorf("expansion past the limit: %v, want frame too large", err)
	}
	var d EventDecoder
	if _, err := d.DecodeOwnedPublishDict(bytes.Clone(body), 5000); CodeOf(err) != CodeFrameTooLarge {
		t.Errorf("decoding past the limit: %v, want frame too large", err)
	}
	if _, err := ExpandPublishDict(nil, body, 50000); err != nil {
		t.Errorf("the same within the limit: %v", err)
	}
	if _, err := d.DecodeOwnedPublishDict(bytes.Clone(body), 50000); err != nil {
		t.Errorf("decoding the same within the limit: %v", err)
	}
}

// FuzzPublishDict feeds arbitrary bodies to the expander and the
// decoder: never a panic; a body is refused exactly when the expander or
// the Publish decoder on its expansion refuses it; what decodes is what
// the Publish decoder makes of the expansion, and encodes again
// (PublishDict's AppendBody) to a body that expands to the plain encoding
// of the same events.
func FuzzPublishDict(f *testing.F) {
	ev := vectorEvent(f)
	f.Add((&PublishDict{Publish{Seq: 1, Events: []match.Event{ev, ev}}}).AppendBody(nil))
	f.Add([]byte{1, 1, 2, 0, 1, 'a', tagInt, 2, 0, 1, 'b', tagString, 1, 'x'})
	f.Add([]byte{1, 2, 1, 0, 1, 'a', tagBool, 1, 1, 1, tagBool, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		plain, xerr := ExpandPublishDict(nil, body, 1<<16)
		var d EventDecoder
		p, err := d.DecodeOwnedPublishDict(bytes.Clone(body), 1<<16)
		if err != nil && CodeOf(err) == CodeInternal {
			t.Fatalf("refusal without a protocol code: %v", err)
		}
		if xerr != nil {
			if err == nil {
				t.Fatalf("expansion refused (%v), DecodeOwnedPublishDict accepts", xerr)
			}
			return
		}
		pm, perr := Decode(TypePublish, plain)
		if (perr == nil) != (err == nil) {
			t.Fatalf("Publish decoder on the expansion says %v, DecodeOwnedPublishDict %v", perr, err)
		}
		if err != nil {
			return
		}
		plainPub := pm.(*Publish)
		for i := range p.Events {
			if !p.Events[i].Equal(plainPub.Events[i]) || !bytes.Equal(p.RawAt(i), plainPub.Raw[i]) {
				t.Fatalf("event %d: %v (raw %x), through the expansion %v (raw %x)", i, p.Events[i], p.RawAt(i), plainPub.Events[i], plainPub.Raw[i])
			}
		}
		// Varints may come overlong, as in Publish: compare encodings of
		// the decoded events, not the input's bytes.
		want := (&Publish{Seq: p.Seq, Events: p.Events}).AppendBody(nil)
		again, err := ExpandPublishDict(nil, (&PublishDict{*p}).AppendBody(nil), HardMaxFrame)
		if err != nil || !bytes.Equal(again, want) {
			t.Fatalf("re-encoded: %v\n%x\nwant\n%x", err, again, want)
		}
	})
}

// TestDecodeOwnedPublishDictIsExpandThenDecode: with any wanted names and
// a decoder warmed by other frames (plain and PublishDict, so that its
// name cache and slab are in play), DecodeOwnedPublishDict decodes a
// frame to the events, and writes out the Raw, that DecodeOwnedPublish
// makes of its expansion.
func TestDecodeOwnedPublishDictIsExpandThenDecode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		warm := genEvents(t, "warm", "w", 1, 4)
		evs := genEvents(t, "n", "e", 1, 6)
		var want *Wanted
		if rapid.Bool().Draw(t, "wanted") {
			want = NewWanted(rapid.SliceOfDistinct(rapid.SampledFrom(attrNames), rapid.ID[string]).Draw(t, "names"))
		}
		body := (&PublishDict{Publish{Seq: 2, Events: evs}}).AppendBody(nil)
		plain, err := ExpandPublishDict(nil, body, HardMaxFrame)
		if err != nil {
			t.Fatal(err)
		}
		ref := EventDecoder{Wanted: want}
		exp, err := ref.DecodeOwnedPublish(plain)
		if err != nil {
			t.Fatal(err)
		}
		d := EventDecoder{Wanted: want}
		d.DecodeOwnedPublish((&Publish{Seq: 1, Events: warm}).AppendBody(nil))
		d.DecodeOwnedPublishDict((&PublishDict{Publish{Seq: 1, Events: warm}}).AppendBody(nil), HardMaxFrame)
		got, err := d.DecodeOwnedPublishDict(body, HardMaxFrame)
		if err != nil {
			t.Fatal(err)
		}
		for i := range evs {
			if !got.Events[i].Equal(exp.Events[i]) {
				t.Fatalf("event %d = %v, through the expansion %v", i, got.Events[i], exp.Events[i])
			}
		}
		checkRawOnDemand(t, got, exp.Raw)
	})
}

// checkRawOnDemand checks the Raw of a batch decoded from a PublishDict
// frame against want (the Raw of its expansion decoded as a Publish): no
// Raw before RawAll, whatever RawAt was asked; RawAt, in any order and
// repeated, gives want[i], the same bytes when asked twice in a row (the
// event is written out once); RawAll gives want, and RawAt after it too.
func checkRawOnDemand(t *rapid.T, got *Publish, want [][]byte) {
	order := rapid.SliceOf(rapid.IntRange(0, len(want)-1)).Draw(t, "asked")
	var prev []byte
	for k, i := range order {
		raw := got.RawAt(i)
		if !bytes.Equal(raw, want[i]) {
			t.Fatalf("RawAt(%d) = %x, want %x", i, raw, want[i])
		}
		if k > 0 && order[k-1] == i && &raw[0] != &prev[0] {
			t.Fatalf("RawAt(%d) asked twice in a row wrote the event out twice", i)
		}
		prev = raw
	}
	if got.Raw != nil {
		t.Fatalf("Raw made before RawAll: %d entries after RawAt of %v", len(got.Raw), order)
	}
	all := got.RawAll()
	if len(all) != len(want) {
		t.Fatalf("RawAll: %d entries, want %d", len(all), len(want))
	}
	for i := range want {
		if !bytes.Equal(all[i], want[i]) || !bytes.Equal(got.RawAt(i), want[i]) {
			t.Fatalf("after RawAll: Raw[%d] = %x, RawAt %x, want %x", i, all[i], got.RawAt(i), want[i])
		}
	}
}

// BenchmarkDictBatch is a publisher's encoding of a vector event into a
// PublishDict batch (AddChecked), against PublishBatch with
// AppendCheckedEvent.
func BenchmarkDictBatch(b *testing.B) {
	ev := vectorEvent(b)
	b.Run("dict", func(b *testing.B) {
		var p DictBatch
		for i := range b.N {
			if i%500 == 0 {
				p.Reset()
			}
			p.AddChecked(ev)
		}
	})
	b.Run("plain", func(b *testing.B) {
		var p PublishBatch
		var buf []byte
		for i := range b.N {
			if i%500 == 0 {
				p.Reset()
			}
			buf, _ = AppendCheckedEvent(buf[:0], ev)
			p.AddRaw(buf)
		}
	})
}

// BenchmarkDecodeOwnedPublishDict is a router's decoding of a frame of
// 500 vector events, wanting one name, as PublishDict (with and without
// writing out every event's Raw) and as Publish.
func BenchmarkDecodeOwnedPublishDict(b *testing.B) {
	evs := make([]match.Event, 500)
	for i := range evs {
		evs[i] = vectorEvent(b)
	}
	dict := (&PublishDict{Publish{Seq: 1, Events: evs}}).AppendBody(nil)
	plain := (&Publish{Seq: 1, Events: evs}).AppendBody(nil)
	want := NewWanted([]string{"symbol"})
	b.Run("dict", func(b *testing.B) {
		d := EventDecoder{Wanted: want}
		for range b.N {
			if _, err := d.DecodeOwnedPublishDict(bytes.Clone(dict), HardMaxFrame); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dict-raw", func(b *testing.B) {
		d := EventDecoder{Wanted: want}
		for range b.N {
			p, err := d.DecodeOwnedPublishDict(bytes.Clone(dict), HardMaxFrame)
			if err != nil {
				b.Fatal(err)
			}
			p.RawAll()
		}
	})
	b.Run("plain", func(b *testing.B) {
		d := EventDecoder{Wanted: want}
		for range b.N {
			if _, err := d.DecodeOwnedPublish(bytes.Clone(plain)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
