package wire

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// compactStrings are string values drawn often, so that a frame repeats
// them (references), among them ones whose reference would not be
// shorter than the string and one with a two-byte length.
var compactStrings = []string{"", "a", "IBM", "NASDAQ", "buy", "héllo", strings.Repeat("long", 40)}

// compactFloats are floats at the edges of the decimal encoding.
var compactFloats = []float64{
	math.Copysign(0, -1), 0, 5, 12.5, 123.45, -0.01, 0.1, 1e-7, 1e-8, 1 << 53, -(1 << 53), 1<<53 + 2,
	1 << 60, 1e300, 5e-324, math.MaxFloat64, 1.0 / 3,
}

// genCompactValue draws a value for the compact encodings: a string from
// compactStrings, a decimal m / 10^s (s up to 9, beyond the encoding's
// 7), an edge float, or any value.
func genCompactValue(t *rapid.T, label string) match.Value {
	switch rapid.IntRange(0, 3).Draw(t, label+".compact") {
	case 0:
		return match.Str(rapid.SampledFrom(compactStrings).Draw(t, label+".str"))
	case 1:
		m := rapid.Int64Range(-1<<54, 1<<54).Draw(t, label+".m")
		s := rapid.IntRange(0, 9).Draw(t, label+".s")
		return match.MustFloat(float64(m) / math.Pow10(s))
	case 2:
		return match.MustFloat(rapid.SampledFrom(compactFloats).Draw(t, label+".float"))
	}
	return genValue(t, label)
}

func genCompactEvent(t *rapid.T, label string) match.Event {
	names := rapid.SliceOfNDistinct(rapid.SampledFrom(attrNames), 0, len(attrNames), rapid.ID[string]).Draw(t, label+".names")
	attrs := make([]match.Attr, len(names))
	for i, n := range names {
		attrs[i] = match.Attr{Name: n, Value: genCompactValue(t, label)}
	}
	return match.MustEvent(attrs...)
}

func genCompactEvents(t *rapid.T, countLabel, prefix string, lo, hi int) []match.Event {
	var evs []match.Event
	for i := range rapid.IntRange(lo, hi).Draw(t, countLabel) {
		evs = append(evs, genCompactEvent(t, prefix+string(rune('0'+i))))
	}
	return evs
}

// compactBody builds a PublishCompact body of evs with a DictBatch,
// checking that AddChecked reports each event's plain size.
func compactBody(t interface{ Fatalf(string, ...any) }, seq uint64, evs []match.Event) (body []byte, plain int) {
	return batchBody(t, seq, evs, true)
}

// TestPublishCompactExpandsToPublish: a batch of any events, built by a
// compact DictBatch or by PublishCompact's AppendBody, expands to exactly
// the Publish body of the same events (every float's bits, -0 included),
// and decodes to those events, with their plain encodings as Raw.
func TestPublishCompactExpandsToPublish(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { checkExpandsToPublish(t, genCompactEvents(t, "n", "e", 1, 10), true) })
}

// TestDecodeOwnedPublishCompactIsExpandThenDecode: with any wanted names
// and a decoder warmed by other frames (plain, PublishDict and
// PublishCompact), DecodeOwnedPublishCompact decodes a frame to the
// events, and writes out the Raw, that DecodeOwnedPublish makes of its
// expansion.
func TestDecodeOwnedPublishCompactIsExpandThenDecode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		warm := genCompactEvents(t, "warm", "w", 1, 4)
		evs := genCompactEvents(t, "n", "e", 1, 8)
		var want *Wanted
		if rapid.Bool().Draw(t, "wanted") {
			want = NewWanted(rapid.SliceOfDistinct(rapid.SampledFrom(attrNames), rapid.ID[string]).Draw(t, "names"))
		}
		body := (&PublishCompact{Publish{Seq: 2, Events: evs}}).AppendBody(nil)
		plain, err := ExpandPublishCompact(nil, body, HardMaxFrame)
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
		d.DecodeOwnedPublishCompact((&PublishCompact{Publish{Seq: 1, Events: warm}}).AppendBody(nil), HardMaxFrame)
		got, err := d.DecodeOwnedPublishCompact(body, HardMaxFrame)
		if err != nil {
			t.Fatal(err)
		}
		for i := range evs {
			if !got.Events[i].Equal(exp.Events[i]) || !bytes.Equal(AppendEvent(nil, got.Events[i]), AppendEvent(nil, exp.Events[i])) {
				t.Fatalf("event %d = %v, through the expansion %v", i, got.Events[i], exp.Events[i])
			}
		}
		checkRawOnDemand(t, got, exp.Raw)
	})
}

// TestDecimalOf: a float the encoder writes as a decimal decodes to the
// same bits; every m / 10^s with |m| up to 10^14 and s up to 7 is one (a
// price in cents always is); -0, NaN, infinities and floats beyond 2^53
// are not.
func TestDecimalOf(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.Float64().Draw(t, "f")
		if v, ok := decimalOf(f); ok {
			if g, ok := decimalFloat(v); !ok || math.Float64bits(g) != math.Float64bits(f) {
				t.Fatalf("decimalOf(%v) = %d, which decodes to %v", f, v, g)
			}
		}
		m := rapid.Int64Range(-1e14, 1e14).Draw(t, "m")
		s := rapid.IntRange(0, maxDecimalScale).Draw(t, "s")
		d := float64(m) / math.Pow10(s)
		v, ok := decimalOf(d)
		if !ok {
			t.Fatalf("%d / 10^%d = %v is not a decimal", m, s, d)
		}
		if g, _ := decimalFloat(v); math.Float64bits(g) != math.Float64bits(d) {
			t.Fatalf("decimalOf(%v) = %d, which decodes to %v", d, v, g)
		}
	})
	for _, f := range []float64{math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1<<53 + 2, 1e300} {
		if v, ok := decimalOf(f); ok {
			t.Errorf("decimalOf(%v) = %d, want none", f, v)
		}
	}
	for _, c := range []struct {
		f float64
		v uint64
	}{{0, 0}, {5, 10 << 3}, {-5, 9 << 3}, {12.5, 250<<3 | 1}, {123.45, 24690<<3 | 2}, {1 << 53, 1 << 57}} {
		if v, ok := decimalOf(c.f); !ok || v != c.v {
			t.Errorf("decimalOf(%v) = %d %v, want %d", c.f, v, ok, c.v)
		}
	}
	if _, ok := decimalFloat(maxDecimalZigzag<<3 | 7); !ok {
		t.Error("the largest mantissa (zig-zag 2^54: 2^53) refused")
	}
	if _, ok := decimalFloat((maxDecimalZigzag + 1) << 3); ok {
		t.Error("a mantissa beyond 2^53 accepted")
	}
}

// TestPublishCompactWritesValuesOnce: a frame repeating one event writes
// its names and string value once and its float as a decimal: the first
// event is PublishDict's less the float's six bytes, plus the layout
// reference 0; each repeat is a one-byte layout reference (for the
// count and the four name references) and the values, the string a
// one-byte reference.
func TestPublishCompactWritesValuesOnce(t *testing.T) {
	ev := vectorEvent(t) // live: true, price: 12.5, qty: -3, symbol: "IBM"
	size := func(n int, compact bool) int {
		evs := make([]match.Event, n)
		for i := range evs {
			evs[i] = ev
		}
		if compact {
			b, _ := compactBody(t, 1, evs)
			return len(b)
		}
		b, _ := dictBody(t, 1, evs)
		return len(b)
	}
	if d, c := size(1, false), size(1, true); c != d-6+1 {
		t.Errorf("one event: %d bytes compact, %d dict: want 5 fewer (12.5 in 3 bytes, not 9; a layout byte)", c, d)
	}
	dictRepeat := (size(101, false) - size(1, false)) / 100
	compactRepeat := (size(101, true) - size(1, true)) / 100
	if want := 1 + 2 + 3 + 2 + 1; compactRepeat != want || dictRepeat != 23 {
		t.Errorf("a repeat: %d bytes compact, %d dict: want %d and 23", compactRepeat, dictRepeat, want)
	}
}

// TestPublishCompactUndo: taking back the last event leaves a compact
// batch (frame and both dictionaries) as if it had never been added.
func TestPublishCompactUndo(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkUndo(t, genCompactEvents(t, "n", "e", 1, 6), genCompactEvent(t, "extra"), genCompactEvent(t, "next"), true)
	})
}

// TestPublishCompactUndoAfterRefusal: Undo after a refused AddChecked
// takes back the event added before it (the one the batch's mark is
// for), string values included, so that event added again encodes as it
// did: the refused event must not leave the cache pointing at entries
// the frame no longer has.
func TestPublishCompactUndoAfterRefusal(t *testing.T) {
	first := match.MustEvent(match.Attr{Name: "a", Value: match.Str("x")})
	taken := match.MustEvent(match.Attr{Name: "a", Value: match.Str("y")}, match.Attr{Name: "b", Value: match.Str("z")})
	bad := match.MustEvent(match.Attr{Name: "a", Value: match.Str("w")}, match.Attr{Name: "b", Value: match.Str("\xff")})
	for _, refusal := range []match.Event{bad, match.MustEvent(match.Attr{Name: "c", Value: match.Str("\xc0")})} {
		var b DictBatch
		b.SetCompact(true)
		for _, e := range []match.Event{first, taken} {
			if _, err := b.AddChecked(e); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.AddChecked(refusal); err == nil {
			t.Fatalf("%v accepted", refusal)
		}
		b.Undo() // takes back taken
		for _, e := range []match.Event{taken, taken} {
			if _, err := b.AddChecked(e); err != nil {
				t.Fatal(err)
			}
		}
		want, _ := compactBody(t, 1, []match.Event{first, taken, taken})
		_, got, _, _ := SplitFrame(b.Frame(1), HardMaxFrame)
		if !bytes.Equal(got, want) {
			t.Fatalf("after refusing %v and undoing\n%x\nwant\n%x", refusal, got, want)
		}
		if _, err := ExpandPublishCompact(nil, got, HardMaxFrame); err != nil {
			t.Fatalf("after refusing %v and undoing: %v", refusal, err)
		}
	}
}

// TestPublishCompactFullDictionary: string values beyond MaxDictValues
// are written out every time, and the frame still expands to the plain
// one.
func TestPublishCompactFullDictionary(t *testing.T) {
	var evs []match.Event
	for i := range 2*MaxDictValues/1000 + 1 {
		attrs := make([]match.Attr, 1000)
		for j := range attrs {
			attrs[j] = match.Attr{Name: fmt.Sprintf("n%04d", j), Value: match.Str(string(rune('a'+i)) + strings.Repeat("v", j%7) + string(rune(0x100+j)))}
		}
		evs = append(evs, match.MustEvent(attrs...), match.MustEvent(attrs...))
	}
	body, _ := compactBody(t, 9, evs)
	got, err := ExpandPublishCompact(nil, body, HardMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&Publish{Seq: 9, Events: evs}).AppendBody(nil); !bytes.Equal(got, want) {
		t.Fatal("a frame past the values' bound does not expand to the plain frame")
	}
	var d EventDecoder
	p, err := d.DecodeOwnedPublishCompact(body, HardMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if !p.Events[i].Equal(evs[i]) {
			t.Fatalf("event %d differs", i)
		}
	}
}

// TestPublishCompactBadInput: each malformed body is refused with a
// protocol error saying why, by the direct decoder and by the expansion;
// the compact tags are unknown in a PublishDict frame.
func TestPublishCompactBadInput(t *testing.T) {
	// seq 1, one event (layout 0) of one attribute "a" written out, then
	// the value.
	one := func(value ...byte) []byte { return append([]byte{1, 1, 0, 1, 0, 1, 'a'}, value...) }
	// seq 1, two events of one attribute "a", the first a string "x",
	// the second of the first's layout.
	two := func(value ...byte) []byte {
		return append([]byte{1, 2, 0, 1, 0, 1, 'a', tagString, 1, 'x', 1}, value...)
	}
	uv := func(v uint64) []byte { return appendUvarint(nil, v) }
	cases := []struct {
		name string
		body []byte
		want string
	}{
		{"reference to no value", one(tagStrRef, 1), "string reference 1 beyond the frame's 0 values"},
		{"reference 0", two(tagStrRef, 0), "string reference 0 beyond"},
		{"reference beyond the values", two(tagStrRef, 2), "string reference 2 beyond the frame's 1 values"},
		{"reference cut short", two(tagStrRef, 0x80), "string reference: bad or truncated varint"},
		{"short reference to no value", one(tagShortRef), "string reference 1 beyond the frame's 0 values"},
		{"short reference beyond the values", two(tagShortRef + 1), "string reference 2 beyond the frame's 1 values"},
		{"last short reference beyond the values", two(255), "string reference 240 beyond the frame's 1 values"},
		{"decimal cut short", one(tagDecimal), "decimal: bad or truncated varint"},
		{"decimal beyond 2^53", one(append([]byte{tagDecimal}, uv((maxDecimalZigzag+1)<<3)...)...), "decimal mantissa beyond 2^53"},
		{"unknown tag", one(7, 0), "unknown value tag 7"},
		{"string cut short", one(tagString, 4, 'x'), "string"},
		{"bad string", one(tagString, 1, 0xff), "UTF-8"},
		{"bad string referred to", []byte{1, 2, 0, 1, 0, 1, 'a', tagString, 1, 0xff, 1, tagStrRef, 1}, "UTF-8"},
		{"layout reference beyond the layouts", []byte{1, 2, 0, 1, 0, 1, 'a', tagBool, 0, 2, tagBool, 0}, "layout reference 2 beyond the frame's 1 layouts"},
		{"layout reference cut short", []byte{1, 1, 0x80}, "layout reference"},
		{"layout reference to no layout", []byte{1, 1, 1, tagBool, 0}, "layout reference 1 beyond the frame's 0 layouts"},
		{"layout's value cut short", []byte{1, 2, 0, 1, 0, 1, 'a', tagBool, 0, 1, tagBool}, "attribute"},
		{"layout of a refused event", []byte{1, 2, 0, 1, 0, 2, '1', '!', tagBool, 0, 1, tagBool, 0}, "name"},
	}
	for _, c := range cases {
		for _, w := range []*Wanted{nil, NewWanted([]string{"zz"})} { // "a" kept, and dropped
			d := EventDecoder{Wanted: w}
			_, err := d.DecodeOwnedPublishCompact(bytes.Clone(c.body), HardMaxFrame)
			if CodeOf(err) != CodeMalformed || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s (wanted %v): DecodeOwnedPublishCompact says %v, want malformed saying %q", c.name, w != nil, err, c.want)
			}
		}
		if _, err2 := Decode(TypePublishCompact, c.body); CodeOf(err2) != CodeMalformed || !strings.Contains(err2.Error(), c.want) {
			t.Errorf("%s: Decode (through the expansion) says %v, want malformed saying %q", c.name, err2, c.want)
		}
	}
	good := two(tagStrRef, 1)
	// The last event's attributes take two bytes each (a name reference,
	// a short string reference), fewer than PublishDict's three.
	short := []byte{1, 2, 0, 3, 0, 1, 'a', tagString, 1, 'x', 0, 1, 'b', tagBool, 0, 0, 1, 'c', tagBool, 0,
		0, 3, 1, tagShortRef, 2, tagShortRef, 3, tagShortRef}
	for _, b := range [][]byte{good, two(tagShortRef), short} {
		if _, err := Decode(TypePublishCompact, b); err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		var d EventDecoder
		if _, err := d.DecodeOwnedPublishCompact(bytes.Clone(b), HardMaxFrame); err != nil {
			t.Fatalf("%x, decoded directly: %v", b, err)
		}
	}
	// The compact tags in a PublishDict frame (one event, "a" written out).
	for _, tag := range []byte{tagStrRef, tagDecimal, tagShortRef} {
		body := []byte{1, 1, 1, 0, 1, 'a', tag, 1}
		want := fmt.Sprintf("unknown value tag %d", tag)
		var d EventDecoder
		if _, err := d.DecodeOwnedPublishDict(bytes.Clone(body), HardMaxFrame); CodeOf(err) != CodeMalformed || !strings.Contains(err.Error(), want) {
			t.Errorf("tag %d in a publish-dict frame: %v, want %s", tag, err, want)
		}
		if _, err := Decode(TypePublishDict, body); CodeOf(err) != CodeMalformed || !strings.Contains(err.Error(), want) {
			t.Errorf("tag %d in a publish-dict frame, expanded: %v, want %s", tag, err, want)
		}
	}
	var d EventDecoder
	// Many references to a long string expand past the limit.
	body := append([]byte{1, 100, 0, 1, 0, 1, 'a', tagString, 100}, strings.Repeat("v", 100)...)
	for range 99 {
		body = append(body, 1, tagStrRef, 1)
	}
	if _, err := ExpandPublishCompact(nil, body, 5000); CodeOf(err) != CodeFrameTooLarge {
		t.Errorf("expansion past the limit: %v, want frame too large", err)
	}
	if _, err := d.DecodeOwnedPublishCompact(bytes.Clone(body), 5000); CodeOf(err) != CodeFrameTooLarge {
		t.Errorf("decoding past the limit: %v, want frame too large", err)
	}
	if _, err := d.DecodeOwnedPublishCompact(bytes.Clone(body), 50000); err != nil {
		t.Errorf("decoding the same within the limit: %v", err)
	}
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// FuzzPublishCompact feeds arbitrary bodies to the expander and the
// decoder: never a panic; a body is refused exactly when the expander or
// the Publish decoder on its expansion refuses it; what decodes is what
// the Publish decoder makes of the expansion (events and Raw), and
// encodes again (PublishCompact's AppendBody) to a body that expands to
// the plain encoding of the same events.
func FuzzPublishCompact(f *testing.F) {
	ev := vectorEvent(f)
	f.Add((&PublishCompact{Publish{Seq: 1, Events: []match.Event{ev, ev}}}).AppendBody(nil))
	f.Add([]byte{1, 2, 0, 1, 0, 1, 'a', tagString, 1, 'x', 1, tagStrRef, 1})
	f.Add([]byte{1, 3, 0, 1, 0, 1, 'a', tagString, 1, 'x', 1, tagShortRef, 0, 1, 1, tagString, 0})
	f.Add([]byte{1, 2, 0, 1, 0, 1, 'a', tagDecimal, 0x91, 0x0f, 1, tagDecimal, 0})
	f.Add([]byte{1, 2, 0, 2, 0, 1, 'a', tagInt, 2, 0, 1, 'b', tagString, 1, 'x', 1, tagInt, 4, tagShortRef})
	f.Fuzz(func(t *testing.T, body []byte) {
		plain, xerr := ExpandPublishCompact(nil, body, 1<<16)
		var d EventDecoder
		d.Wanted = NewWanted([]string{"a", "symbol"})
		p, err := d.DecodeOwnedPublishCompact(bytes.Clone(body), 1<<16)
		if err != nil && CodeOf(err) == CodeInternal {
			t.Fatalf("refusal without a protocol code: %v", err)
		}
		if xerr != nil {
			if err == nil {
				t.Fatalf("expansion refused (%v), DecodeOwnedPublishCompact accepts", xerr)
			}
			return
		}
		var ref EventDecoder
		ref.Wanted = d.Wanted
		plainPub, perr := ref.DecodeOwnedPublish(plain)
		if (perr == nil) != (err == nil) {
			t.Fatalf("Publish decoder on the expansion says %v, DecodeOwnedPublishCompact %v", perr, err)
		}
		if err != nil {
			return
		}
		for i := range p.Events {
			if !p.Events[i].Equal(plainPub.Events[i]) || !bytes.Equal(p.RawAt(i), plainPub.Raw[i]) {
				t.Fatalf("event %d: %v (raw %x), through the expansion %v (raw %x)", i, p.Events[i], p.RawAt(i), plainPub.Events[i], plainPub.Raw[i])
			}
		}
		all, err := Decode(TypePublish, plain)
		if err != nil {
			t.Fatal(err)
		}
		evs := all.(*Publish).Events
		want := (&Publish{Seq: p.Seq, Events: evs}).AppendBody(nil)
		again, err := ExpandPublishCompact(nil, (&PublishCompact{Publish{Seq: p.Seq, Events: evs}}).AppendBody(nil), HardMaxFrame)
		if err != nil || !bytes.Equal(again, want) {
			t.Fatalf("re-encoded: %v\n%x\nwant\n%x", err, again, want)
		}
	})
}

// TestPublishCompactRefusesLikeCheckEvent: an event CheckEvent refuses,
// of a new layout or of the last one, is refused with the same error and
// leaves the compact batch unchanged, also when its strings before the
// bad one were entered.
func TestPublishCompactRefusesLikeCheckEvent(t *testing.T) {
	good := vectorEvent(t)
	next := match.MustEvent(match.Attr{Name: "new", Value: match.Str("ok")}, match.Attr{Name: "zz", Value: match.Str("IBM")})
	for _, bad := range []match.Event{
		match.MustEvent(match.Attr{Name: "new", Value: match.Str("ok")}, match.Attr{Name: "zz", Value: match.Str("\xff")}),
		match.MustEvent(match.Attr{Name: "live", Value: match.Bool(true)}, match.Attr{Name: "price", Value: match.MustFloat(1)},
			match.Attr{Name: "qty", Value: match.Int(1)}, match.Attr{Name: "symbol", Value: match.Str("a\xffb")}),
		match.MustEvent(match.Attr{Name: "live", Value: match.Str("fresh")}, match.Attr{Name: "price", Value: match.MustFloat(1)},
			match.Attr{Name: "qty", Value: match.Int(1)}, match.Attr{Name: "symbol", Value: match.Str("\xc0")}),
	} {
		var b DictBatch
		b.SetCompact(true)
		if _, err := b.AddChecked(good); err != nil {
			t.Fatal(err)
		}
		_, err := b.AddChecked(bad)
		if want := CheckEvent(bad); err == nil || err.Error() != want.Error() {
			t.Fatalf("refusal of %v: %v, want %v", bad, err, want)
		}
		for _, e := range []match.Event{good, next} {
			if _, err := b.AddChecked(e); err != nil {
				t.Fatal(err)
			}
		}
		want, _ := compactBody(t, 1, []match.Event{good, good, next})
		if _, got, _, _ := SplitFrame(b.Frame(1), HardMaxFrame); !bytes.Equal(got, want) {
			t.Fatalf("after refusing %v\n%x\nwant\n%x", bad, got, want)
		}
	}
}
