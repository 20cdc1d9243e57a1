package wire

import (
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func genWords(t *rapid.T, n int, label string) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = rapid.Uint64().Draw(t, label)
	}
	return out
}

func genRTOMessage(t *rapid.T) Message {
	filters := rapid.SliceOfN(rapid.StringMatching(`[a-z]{1,3} [<>=]{1,2} [0-9]{1,3}`), 1, 8)
	switch rapid.IntRange(0, 4).Draw(t, "type") {
	case 0:
		return &AssistOffer{Modes: uint8(rapid.IntRange(1, 3).Draw(t, "modes"))}
	case 1:
		return &RTOQuery{Q: rapid.Uint64().Draw(t, "q"), Filter: rapid.StringN(0, 30, -1).Draw(t, "filter"), Filters: filters.Draw(t, "filters")}
	case 2:
		n := rapid.IntRange(0, 4).Draw(t, "words")
		return &RTOAnswer{Q: rapid.Uint64().Draw(t, "q"), Up: genWords(t, n, "up"), Down: genWords(t, n, "down"), Overlap: genWords(t, n, "overlap")}
	case 3:
		return &FFFixed{Gen: rapid.Uint64().Draw(t, "gen"), Filters: rapid.SliceOfN(rapid.StringN(1, 20, -1), 0, 8).Draw(t, "fixed")}
	}
	return &FFClaim{Gen: rapid.Uint64().Draw(t, "gen"), Sub: rapid.Uint64().Draw(t, "sub"), Covering: genWords(t, rapid.IntRange(0, 4).Draw(t, "words"), "w")}
}

// TestRTORoundTrip: every RTO and FF message decodes to what was encoded.
func TestRTORoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genRTOMessage(t)
		typ, body, rest, err := SplitFrame(AppendFrame(nil, m), HardMaxFrame)
		if err != nil || len(rest) != 0 {
			t.Fatalf("split: %v (%d left)", err, len(rest))
		}
		if !typ.Known() || typ.String() == "" || strings.HasPrefix(typ.String(), "type-") {
			t.Fatalf("type %d unnamed or unknown", typ)
		}
		got, err := Decode(typ, body)
		if err != nil {
			t.Fatalf("decode %T: %v", m, err)
		}
		if !reflect.DeepEqual(normalise(got), normalise(m)) {
			t.Fatalf("round trip:\n got %#v\nwant %#v", got, m)
		}
	})
}

// normalise makes empty and nil slices compare equal.
func normalise(m Message) Message {
	fix := func(p *[]uint64) {
		if len(*p) == 0 {
			*p = nil
		}
	}
	switch m := m.(type) {
	case *RTOAnswer:
		c := *m
		fix(&c.Up)
		fix(&c.Down)
		fix(&c.Overlap)
		return &c
	case *FFClaim:
		c := *m
		fix(&c.Covering)
		return &c
	case *FFFixed:
		c := *m
		if len(c.Filters) == 0 {
			c.Filters = nil
		}
		return &c
	}
	return m
}

func TestRTOBadInput(t *testing.T) {
	for _, c := range []struct {
		name  string
		frame []byte
		want  string
	}{
		{"assist offer no modes", frameOf(TypeAssistOffer, []byte{0}), "modes"},
		{"assist offer unknown mode", frameOf(TypeAssistOffer, []byte{4}), "modes"},
		{"rto query empty vector", frameOf(TypeRTOQuery, []byte{1, 1, 'x', 0}), "vector of 0 filters"},
		{"rto query truncated", frameOf(TypeRTOQuery, []byte{1, 5, 'x'}), ""},
		{"rto answer forged count", frameOf(TypeRTOAnswer, []byte{1, 100, 0, 0}), "exceeds"},
		{"rto answer too many words", frameOf(TypeRTOAnswer, append([]byte{1, 0x81, 0x08}, make([]byte, 24*1025)...)), "exceed"},
		{"rto answer trailing", frameOf(TypeRTOAnswer, append([]byte{1, 0}, 9)), ""},
		{"ff claim forged count", frameOf(TypeFFClaim, []byte{1, 1, 9, 0}), "exceeds"},
		{"ff fixed bad utf8", frameOf(TypeFFFixed, []byte{1, 1, 1, 0xff}), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			typ, body, _, err := SplitFrame(c.frame, HardMaxFrame)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Decode(typ, body)
			if err == nil || CodeOf(err) != CodeMalformed || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a malformed error containing %q", err, c.want)
			}
		})
	}
}

// FuzzRTO is FuzzFrame seeded with RTO and FF frames: never a panic, and
// whatever decodes re-encodes stably.
func FuzzRTO(f *testing.F) {
	for _, m := range []Message{
		&AssistOffer{Modes: AssistRTO | AssistFF},
		&RTOQuery{Q: 7, Filter: `price > 5`, Filters: []string{`price > 1`, `symbol == "IBM"`}},
		&RTOAnswer{Q: 7, Up: []uint64{1}, Down: []uint64{2}, Overlap: []uint64{3}},
		&FFFixed{Gen: 1, Filters: []string{`symbol == "IBM"`}},
		&FFClaim{Gen: 1, Sub: 4, Covering: []uint64{1}},
	} {
		f.Add(AppendFrame(nil, m))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFrame(t, data)
	})
}
