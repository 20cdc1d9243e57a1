package wire

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
)

// FuzzPlaceClaim feeds arbitrary bodies to the place-claim decoder: never a
// panic; a refusal carries a protocol code; an accepted claim has 1 to
// MaxBatchFilters parents, none its own subscription, ids that do not
// overflow, and re-encodes to a body that decodes to the same claim
// (checkFrame).
func FuzzPlaceClaim(f *testing.F) {
	for _, m := range []*PlaceClaim{{First: 8, Parents: []uint64{7}}, {First: 1 << 40, Parents: []uint64{0, 3, 0}},
		{First: 1<<64 - 2, Parents: []uint64{1, 2}}} {
		f.Add(m.AppendBody(nil))
	}
	f.Add([]byte{7, 1, 7})
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, body []byte) {
		frame := AppendFrame(nil, rawBody{TypePlaceClaim, body})
		_, _, once, ok := checkFrame(t, frame)
		if !ok {
			return
		}
		m, err := Decode(TypePlaceClaim, body)
		if err != nil {
			t.Fatalf("checkFrame accepted what Decode refuses: %v", err)
		}
		c := m.(*PlaceClaim)
		if len(c.Parents) == 0 || len(c.Parents) > MaxBatchFilters || c.First+uint64(len(c.Parents)-1) < c.First {
			t.Fatalf("accepted %d parents from %d", len(c.Parents), c.First)
		}
		for i, p := range c.Parents {
			if p == c.First+uint64(i) {
				t.Fatalf("accepted a claim of %d over itself", p)
			}
		}
		if !bytes.Equal(once, AppendFrame(nil, c)) {
			t.Fatal("re-encoding differs")
		}
	})
}

// rawBody is a message of type typ with a given body, for feeding the
// decoder bytes no encoder would write.
type rawBody struct {
	typ  Type
	body []byte
}

func (m rawBody) Type() Type                 { return m.typ }
func (m rawBody) AppendBody(b []byte) []byte { return append(b, m.body...) }

// TestPlaceClaimRefusals: a claim over itself (first or later in the
// run), no parents, more parents than the bytes hold, ids that overflow,
// a truncated body and trailing bytes are refused as malformed.
func TestPlaceClaimRefusals(t *testing.T) {
	top := binary.AppendUvarint(nil, 1<<64-1)
	for _, body := range [][]byte{{7, 1, 7}, {7, 2, 0, 8}, {7, 0}, {7, 5, 1}, append(top, 2, 1, 2), {7}, {}, {7, 1, 8, 0}, {0x80, 0x80}} {
		if _, err := Decode(TypePlaceClaim, body); CodeOf(err) != CodeMalformed {
			t.Errorf("body %x: %v, want a malformed refusal", body, err)
		}
	}
	m, err := Decode(TypePlaceClaim, []byte{8, 3, 7, 0, 8})
	if c, ok := m.(*PlaceClaim); err != nil || !ok || c.First != 8 || !slices.Equal(c.Parents, []uint64{7, 0, 8}) {
		t.Fatalf("decode 08 03 07 00 08: %v %v", m, err)
	}
}
