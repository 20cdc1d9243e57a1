package wire

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSubscribeBatchRoundTrip(t *testing.T) {
	in := &SubscribeBatch{First: 1 << 40, Filters: []string{`symbol == "IBM"`, `price < 10 && venue != "X"`, `a exists`}}
	typ, body, _, err := SplitFrame(AppendFrame(nil, in), DefaultMaxFrame)
	if err != nil || typ != TypeSubscribeBatch {
		t.Fatalf("split: %v %v", typ, err)
	}
	m, err := Decode(typ, body)
	if err != nil {
		t.Fatal(err)
	}
	out := m.(*SubscribeBatch)
	if out.First != in.First || !slices.Equal(out.Filters, in.Filters) {
		t.Fatalf("got %+v, want %+v", out, in)
	}
	ack, err := Decode(TypeAck, (&Ack{About: TypeSubscribeBatch, ID: 5}).AppendBody(nil))
	if err != nil || ack.(*Ack).ID != 5 {
		t.Fatalf("batch ack: %v %v", ack, err)
	}
}

// TestSubscribeBatchHostile: every malformed body is a CodeMalformed
// error naming what is wrong, never a panic or a huge allocation.
func TestSubscribeBatchHostile(t *testing.T) {
	body := func(first, count uint64, filters ...[]byte) []byte {
		b := binary.AppendUvarint(nil, first)
		b = binary.AppendUvarint(b, count)
		for _, f := range filters {
			b = binary.AppendUvarint(b, uint64(len(f)))
			b = append(b, f...)
		}
		return b
	}
	long := []byte(strings.Repeat("a", MaxFilterLen+1))
	many := make([][]byte, MaxBatchFilters+1)
	for i := range many {
		many[i] = []byte("a")
	}
	cases := []struct {
		name, want string
		body       []byte
	}{
		{"empty body", "first id", nil},
		{"no filters", "no filters", body(1, 0)},
		{"forged count", "exceeds what the", body(1, 1<<40, []byte("a"))},
		{"count above the filters", "subscribe-batch filter", body(1, 3, []byte("a > 1"), []byte("b > 1"))},
		{"too many filters", "exceed", body(1, MaxBatchFilters+1, many...)},
		{"ids overflow", "overflow", body(math.MaxUint64, 2, []byte("a"), []byte("b"))},
		{"invalid UTF-8", "invalid UTF-8", body(1, 1, []byte{0xff, 0xfe})},
		{"oversized filter", "exceeds", body(1, 1, long)},
		{"trailing bytes", "trailing", append(body(1, 1, []byte("a")), 0)},
	}
	for _, c := range cases {
		_, err := Decode(TypeSubscribeBatch, c.body)
		if err == nil || CodeOf(err) != CodeMalformed || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a malformed-frame error containing %q", c.name, err, c.want)
		}
	}
	if _, err := Decode(TypeSubscribeBatch, body(math.MaxUint64, 1, []byte("a"))); err != nil {
		t.Errorf("one filter at the last id: %v", err)
	}
}

// FuzzSubscribeBatch feeds arbitrary bodies to the SubscribeBatch decoder:
// no panic; an accepted batch has 1 to MaxBatchFilters valid UTF-8 filters
// within MaxFilterLen whose ids do not overflow, and its re-encoding
// decodes to the same batch.
func FuzzSubscribeBatch(f *testing.F) {
	f.Add((&SubscribeBatch{First: 3, Filters: []string{`a > 1`, `b == "x"`}}).AppendBody(nil))
	f.Add([]byte{1, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 2, 1, 'a', 1, 'b'})
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := Decode(TypeSubscribeBatch, body)
		if err != nil {
			if CodeOf(err) != CodeMalformed {
				t.Fatalf("refusal without the malformed code: %v", err)
			}
			return
		}
		b := m.(*SubscribeBatch)
		if n := len(b.Filters); n == 0 || n > MaxBatchFilters || b.First > math.MaxUint64-uint64(n-1) {
			t.Fatalf("accepted %d filters from id %d", n, b.First)
		}
		for _, s := range b.Filters {
			if !utf8.ValidString(s) || len(s) > MaxFilterLen {
				t.Fatalf("accepted filter %q", s)
			}
		}
		again, err := Decode(TypeSubscribeBatch, b.AppendBody(nil))
		if err != nil {
			t.Fatalf("re-encoded batch refused: %v", err)
		}
		if a := again.(*SubscribeBatch); a.First != b.First || !slices.Equal(a.Filters, b.Filters) {
			t.Fatalf("round trip differs: %+v, then %+v", b, a)
		}
	})
}
