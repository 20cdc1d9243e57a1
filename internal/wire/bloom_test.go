package wire

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

func genBloomParams(t *rapid.T) *BloomParams {
	if rapid.Bool().Draw(t, "exact") {
		return nil
	}
	return &BloomParams{
		M:    64 * rapid.Uint64Range(1, MaxSummaryWords).Draw(t, "words"),
		K:    rapid.Uint64Range(1, MaxBloomK).Draw(t, "k"),
		Seed: rapid.Uint64().Draw(t, "seed"),
		Flat: rapid.Bool().Draw(t, "flat"),
		Hash: rapid.StringMatching(`[a-z0-9/-]{1,20}`).Draw(t, "hash"),
	}
}

// genSummary draws summaries from empty to full, sparse and dense.
func genSummary(t *rapid.T) []uint64 {
	words := make([]uint64, rapid.IntRange(1, 32).Draw(t, "words"))
	fill := rapid.IntRange(0, 64).Draw(t, "fill")
	for i := range words {
		for b := range 64 {
			if rapid.IntRange(0, 63).Draw(t, "bit") < fill {
				words[i] |= 1 << b
			}
		}
	}
	return words
}

func genBloomMessage(t *rapid.T) Message {
	switch rapid.IntRange(0, 2).Draw(t, "type") {
	case 0:
		return &LinkHello{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"a", "b"}, Bloom: genBloomParams(t)}
	case 1:
		term := rapid.Custom(func(t *rapid.T) BloomTerm {
			return BloomTerm{Qual: rapid.StringN(0, 20, -1).Draw(t, "qual"), C: rapid.StringN(1, 20, -1).Draw(t, "c")}
		})
		m := &BloomTerms{Snapshot: rapid.Bool().Draw(t, "snapshot"), Add: rapid.SliceOfN(term, 0, 4).Draw(t, "add")}
		if !m.Snapshot {
			m.Remove = rapid.SliceOfN(term, 0, 4).Draw(t, "remove")
		}
		return m
	}
	m := &BloomPublish{Seq: rapid.Uint64().Draw(t, "seq")}
	for range rapid.IntRange(0, 4).Draw(t, "n") {
		e := BloomEvent{Event: AppendEvent(nil, genEvent(t, "ev"))}
		if e.Exact = rapid.Bool().Draw(t, "exact"); !e.Exact {
			e.Summary = genSummary(t)
		}
		if rapid.Bool().Draw(t, "witnessed") {
			e.Witness = rapid.Uint64Min(1).Draw(t, "witness")
		}
		m.Events = append(m.Events, e)
	}
	return m
}

// TestBloomRoundTrip: every Bloom message decodes to what was encoded, and
// a BloomPublish entry's Entry is exactly its encoding, witness included,
// so forwarding it unchanged (a batch given the witness it came with) is
// forwarding the same event, summary and witness.
func TestBloomRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genBloomMessage(t)
		frame := AppendFrame(nil, m)
		typ, body, rest, err := SplitFrame(frame, HardMaxFrame)
		if err != nil || len(rest) != 0 {
			t.Fatalf("split: %v (%d left)", err, len(rest))
		}
		got, err := Decode(typ, body)
		if err != nil {
			t.Fatalf("decode %T: %v", m, err)
		}
		if p, ok := got.(*BloomPublish); ok {
			var batch BloomBatch
			for i := range p.Events {
				e := &p.Events[i]
				want := refBloomEntry(e.Exact, e.Summary, e.Event, e.Witness)
				if !bytes.Equal(e.Entry, want) {
					t.Fatalf("entry %d: %x, want %x", i, e.Entry, want)
				}
				batch.AddEntry(e.Entry, e.Witness)
				e.Entry = nil
			}
			if again := batch.AppendFrame(nil, p.Seq); !bytes.Equal(again, frame) {
				t.Fatalf("batch of received entries:\n%x\nwant\n%x", again, frame)
			}
		}
		if !reflect.DeepEqual(normalizeBloom(got), normalizeBloom(m)) {
			t.Fatalf("round trip:\n got %#v\nwant %#v", got, m)
		}
	})
}

// normalizeBloom makes empty and nil slices compare equal.
func normalizeBloom(m Message) Message {
	switch m := m.(type) {
	case *BloomTerms:
		c := *m
		if len(c.Add) == 0 {
			c.Add = nil
		}
		if len(c.Remove) == 0 {
			c.Remove = nil
		}
		return &c
	case *BloomPublish:
		c := *m
		if len(c.Events) == 0 {
			c.Events = nil
		}
		return &c
	}
	return m
}

// TestSummaryEncodings: the entry picks the shorter of dense and sparse,
// and both decode to the same words.
func TestSummaryEncodings(t *testing.T) {
	ev := AppendEvent(nil, match.MustEvent(match.Attr{Name: "a", Value: match.Int(1)}))
	for _, tc := range []struct {
		name  string
		words []uint64
		enc   byte
	}{
		{"empty", make([]uint64, 16), summarySparse},
		{"few bits", []uint64{1, 0, 1 << 63, 0, 0, 0, 0, 0x100}, summarySparse},
		{"full", []uint64{^uint64(0), ^uint64(0)}, summaryDense},
	} {
		entry := AppendBloomEvent(nil, false, tc.words, ev)
		if entry[0] != tc.enc {
			t.Errorf("%s: encoding %d, want %d", tc.name, entry[0], tc.enc)
		}
		frame := AppendFrame(nil, &BloomPublish{Seq: 1, Events: []BloomEvent{{Summary: tc.words, Event: ev}}})
		typ, body, _, _ := SplitFrame(frame, 0)
		m, err := Decode(typ, body)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := m.(*BloomPublish).Events[0].Summary; !reflect.DeepEqual(got, tc.words) {
			t.Errorf("%s: summary %x, want %x", tc.name, got, tc.words)
		}
		dense := 1 + 1 + 8*len(tc.words)
		if len(entry)-len(ev)-1 > dense {
			t.Errorf("%s: summary took %d bytes, dense would take %d", tc.name, len(entry)-len(ev)-1, dense)
		}
	}
}

func TestBloomBadInput(t *testing.T) {
	hello := func(mode ...byte) []byte {
		return append([]byte{1, 1, 1, 'a', 1, 1, 'a'}, mode...)
	}
	ev := AppendEvent(nil, match.MustEvent(match.Attr{Name: "a", Value: match.Int(1)}))
	entry := func(head ...byte) []byte {
		b := append([]byte{1, 1}, head...)
		return appendBytes(b, ev)
	}
	for _, tc := range []struct {
		name string
		typ  Type
		body []byte
		want string
	}{
		{"hello without mode", TypeLinkHello, hello(), "forwarding mode: truncated"},
		{"hello bad mode", TypeLinkHello, hello(2), "not 0 (exact) or 1 (bloom)"},
		{"hello m not multiple of 64", TypeLinkHello, hello(1, 100, 3, 0, 0, 1, 'h'), "m = 100"},
		{"hello m too large", TypeLinkHello, hello(1, 0x80, 0x80, 0x08, 3, 0, 0, 1, 'h'), "m = 131072"},
		{"hello k zero", TypeLinkHello, hello(1, 64, 0, 0, 0, 1, 'h'), "k = 0"},
		{"hello bad flat", TypeLinkHello, hello(1, 64, 3, 0, 7, 1, 'h'), "flat flag"},
		{"hello no hash", TypeLinkHello, hello(1, 64, 3, 0, 0, 0), "hash family name of 0 bytes"},
		{"terms bad flag", TypeBloomTerms, []byte{2, 0, 0}, "snapshot flag"},
		{"terms snapshot removes", TypeBloomTerms, []byte{1, 1, 0, 1, 'x', 0}, "a snapshot removes nothing"},
		{"terms empty constraint", TypeBloomTerms, []byte{0, 0, 1, 0, 0}, "constraint 1-"},
		{"terms forged count", TypeBloomTerms, []byte{0, 0, 0x80, 0x80, 0x04}, "exceeds what"},
		{"publish unknown encoding", TypeBloomPublish, entry(9), "unknown summary encoding 9"},
		{"publish zero words", TypeBloomPublish, entry(1, 0), "summary of 0 words"},
		{"publish too many words", TypeBloomPublish, entry(1, 0x81, 0x08), "summary of 1025 words"},
		{"publish dense truncated", TypeBloomPublish, []byte{1, 1, 1, 2, 0, 0}, "truncated"},
		{"publish sparse beyond", TypeBloomPublish, entry(2, 1, 1, 64), "beyond 64"},
		{"publish sparse gap overflow", TypeBloomPublish, entry(2, 1, 2, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1), "beyond 64"},
		{"publish sparse second beyond", TypeBloomPublish, entry(2, 1, 2, 60, 3), "beyond 64"},
		{"publish empty event", TypeBloomPublish, []byte{1, 1, 0, 0}, "empty event"},
		{"publish trailing", TypeBloomPublish, append(entry(0), 7), "trailing"},
		{"publish witness zero", TypeBloomPublish, entry(0x80, 0, 0, 0, 0, 0, 0, 0, 0), "witness 0"},
		{"publish witness truncated", TypeBloomPublish, []byte{1, 1, 0x81, 1, 2, 3}, "witness: truncated"},
		{"publish witness unknown encoding", TypeBloomPublish, entry(0x83, 1, 0, 0, 0, 0, 0, 0, 0), "unknown summary encoding 3"},
		{"publish witness other flag", TypeBloomPublish, entry(0xc0, 1, 0, 0, 0, 0, 0, 0, 0), "unknown summary encoding 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.typ, tc.body)
			if CodeOf(err) != CodeMalformed || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want malformed with %q", err, tc.want)
			}
		})
	}
}

func bloomSeedFrames() [][]byte {
	ev := AppendEvent(nil, match.MustEvent(
		match.Attr{Name: "price", Value: match.MustFloat(9.5)},
		match.Attr{Name: "symbol", Value: match.Str("IBM")},
	))
	msgs := []Message{
		&LinkHello{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"a", "b"}, Bloom: &BloomParams{M: 1024, K: 3, Hash: "bloom/v3-murmur3-double"}},
		&LinkHello{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"b"}},
		&BloomTerms{Snapshot: true, Add: []BloomTerm{{C: `symbol == "IBM"`}, {Qual: `symbol == "IBM"`, C: `price < 10`}}},
		&BloomTerms{Remove: []BloomTerm{{C: `x == 1`}}, Add: []BloomTerm{{C: `y > 2`}}},
		&BloomPublish{Seq: 1, Events: []BloomEvent{
			{Summary: []uint64{5, 0, 1 << 40, 0}, Event: ev},
			{Exact: true, Event: ev},
			{Summary: []uint64{^uint64(0), 3}, Event: ev},
			{Summary: []uint64{5, 0, 1 << 40, 0}, Event: ev, Witness: 0x1122334455667788},
			{Exact: true, Event: ev, Witness: 1},
		}},
	}
	var out [][]byte
	for _, m := range msgs {
		out = append(out, AppendFrame(nil, m))
	}
	return out
}

// FuzzBloomFrame is FuzzFrame seeded with the Bloom messages: never a
// panic, and whatever decodes re-encodes to a fixed point.
func FuzzBloomFrame(f *testing.F) {
	for _, s := range bloomSeedFrames() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFrame(t, data)
	})
}

// refBloomEvent is the entry encoding spelled out: dense words or sparse
// gaps, whichever is shorter (dense on a tie), then the event.
func refBloomEvent(exact bool, summary []uint64, event []byte) []byte {
	if exact {
		return appendBytes([]byte{summaryExact}, event)
	}
	var gaps []byte
	count, prev := 0, -1
	for pos := range 64 * len(summary) {
		if summary[pos/64]&(1<<(pos%64)) != 0 {
			gaps = binary.AppendUvarint(gaps, uint64(pos-prev-1))
			prev = pos
			count++
		}
	}
	sparse := append(binary.AppendUvarint(nil, uint64(count)), gaps...)
	b := []byte{summarySparse}
	if len(sparse) >= 8*len(summary) {
		b[0] = summaryDense
		sparse = nil
		for _, w := range summary {
			sparse = binary.LittleEndian.AppendUint64(sparse, w)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(summary)))
	return appendBytes(append(b, sparse...), event)
}

// TestAppendBloomEventMatchesReference: entries are byte for byte the
// spelled-out encoding, appended after what the buffer held.
func TestAppendBloomEventMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		exact := rapid.Bool().Draw(t, "exact")
		summary := genSummary(t)
		event := AppendEvent(nil, genEvent(t, "ev"))
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 8).Draw(t, "prefix")
		got := AppendBloomEvent(bytes.Clone(prefix), exact, summary, event)
		want := append(bytes.Clone(prefix), refBloomEvent(exact, summary, event)...)
		if !bytes.Equal(got, want) {
			t.Fatalf("entry %x, want %x", got, want)
		}
	})
}

// TestAppendBloomEventReusesBuffer: a buffer with room for the event and
// 24 bytes a summary word takes an entry without allocating, sparse or
// dense.
func TestAppendBloomEventReusesBuffer(t *testing.T) {
	event := bytes.Repeat([]byte{'x'}, 200)
	for _, summary := range [][]uint64{make([]uint64, 16), {1, 1 << 40, 0, 7}, {0x0101010101010101, 0}, {^uint64(0), ^uint64(0)}} {
		for _, exact := range []bool{false, true} {
			buf := make([]byte, 0, 8+len(event)+24*len(summary))
			if n := testing.AllocsPerRun(10, func() { AppendBloomEvent(buf, exact, summary, event) }); n != 0 {
				t.Errorf("summary %x, exact %v: %.0f allocations", summary, exact, n)
			}
		}
	}
}

// BenchmarkAppendBloomEvent encodes a 60-bit summary of 1,024 bits (a
// stock summary) with a 200-byte event into a reused buffer.
func BenchmarkAppendBloomEvent(b *testing.B) {
	summary := make([]uint64, 16)
	for i := range 60 {
		pos := (i * 167) % 1024
		summary[pos/64] |= 1 << (pos % 64)
	}
	event := bytes.Repeat([]byte{'x'}, 200)
	var buf []byte
	for b.Loop() {
		buf = AppendBloomEvent(buf[:0], false, summary, event)
	}
}

// BenchmarkDecodeBloomPublish decodes a frame of 64 entries, each a
// 60-bit summary of 1,024 bits (a stock summary) and a 200-byte event:
// what an inner or last router reads per frame (per-entry figures are
// the op time over 64).
func BenchmarkDecodeBloomPublish(b *testing.B) {
	m := &BloomPublish{Seq: 1}
	event := bytes.Repeat([]byte{'x'}, 200)
	for i := range 64 {
		summary := make([]uint64, 16)
		for j := range 60 {
			pos := (i*31 + j*167) % 1024
			summary[pos/64] |= 1 << (pos % 64)
		}
		m.Events = append(m.Events, BloomEvent{Summary: summary, Event: event})
	}
	typ, body, _, err := SplitFrame(AppendFrame(nil, m), HardMaxFrame)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Decode(typ, body); err != nil {
			b.Fatal(err)
		}
	}
}

// refBloomEntry is refBloomEvent with a witness spelled out: the flag in
// the encoding byte, then the witness, 8 bytes little endian.
func refBloomEntry(exact bool, summary []uint64, event []byte, witness uint64) []byte {
	b := refBloomEvent(exact, summary, event)
	if witness == 0 {
		return b
	}
	out := binary.LittleEndian.AppendUint64([]byte{b[0] | 0x80}, witness)
	return append(out, b[1:]...)
}

// TestBloomBatchSetsWitness: a batch re-encodes any entry, with or
// without a witness, with the witness it is given (none for 0), and the
// frame decodes to the same events and summaries with those witnesses:
// what an inner router does when it passes an entry on to a link that
// speaks witnesses, or strips it for one that does not.
func TestBloomBatchSetsWitness(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genBloomMessage(t)
		p, ok := m.(*BloomPublish)
		if !ok {
			t.Skip("not a bloom-publish")
		}
		typ, body, _, err := SplitFrame(AppendFrame(nil, p), HardMaxFrame)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(typ, body)
		if err != nil {
			t.Fatal(err)
		}
		var batch BloomBatch
		want := &BloomPublish{Seq: p.Seq}
		for _, e := range got.(*BloomPublish).Events {
			w := rapid.OneOf(rapid.Just(uint64(0)), rapid.Just(e.Witness), rapid.Uint64()).Draw(t, "new witness")
			batch.AddEntry(e.Entry, w)
			want.Events = append(want.Events, BloomEvent{Exact: e.Exact, Summary: e.Summary, Event: e.Event, Witness: w})
		}
		frame := batch.AppendFrame(nil, p.Seq)
		if wantFrame := AppendFrame(nil, want); !bytes.Equal(frame, wantFrame) {
			t.Fatalf("batch\n%x\nwant\n%x", frame, wantFrame)
		}
	})
}

// FuzzBloomEntry feeds arbitrary bytes to the entry decoder as the one
// entry of a bloom-publish: never a panic; an accepted entry's Entry is
// exactly the bytes it took, and a batch re-encoding it with its own
// witness, with another or with none decodes to the same event and
// summary with that witness.
func FuzzBloomEntry(f *testing.F) {
	ev := AppendEvent(nil, match.MustEvent(match.Attr{Name: "a", Value: match.Int(1)}))
	f.Add(AppendBloomEvent(nil, true, nil, ev), uint64(0))
	f.Add(AppendBloomEvent(nil, false, []uint64{5, 0, 1 << 40, 0}, ev), uint64(9))
	f.Add(refBloomEntry(false, []uint64{^uint64(0), 3}, ev, 0x1122334455667788), uint64(1))
	f.Add(refBloomEntry(true, nil, ev, 1), uint64(0))
	f.Fuzz(func(t *testing.T, entry []byte, other uint64) {
		body := append([]byte{1, 1}, entry...)
		m, err := Decode(TypeBloomPublish, body)
		if err != nil {
			if CodeOf(err) != CodeMalformed {
				t.Fatalf("refused without the malformed code: %v", err)
			}
			return
		}
		e := m.(*BloomPublish).Events[0]
		if !bytes.Equal(e.Entry, entry) {
			t.Fatalf("Entry %x, took %x", e.Entry, entry)
		}
		for _, w := range []uint64{e.Witness, other, 0} {
			var b BloomBatch
			b.AddEntry(e.Entry, w)
			typ, body2, _, err := SplitFrame(b.AppendFrame(nil, 1), HardMaxFrame)
			if err != nil {
				t.Fatal(err)
			}
			m2, err := Decode(typ, body2)
			if err != nil {
				t.Fatalf("witness %x: the re-encoded entry is refused: %v", w, err)
			}
			got := m2.(*BloomPublish).Events[0]
			if got.Witness != w || got.Exact != e.Exact || !slices.Equal(got.Summary, e.Summary) || !bytes.Equal(got.Event, e.Event) {
				t.Fatalf("witness %x: decoded %+v, want %+v with that witness", w, got, e)
			}
		}
	})
}
