package scribe

import (
	"math/rand/v2"
	"testing"
)

// TestGroupIDGolden is the seed's Example 1 root key.
func TestGroupIDGolden(t *testing.T) {
	s := Space{Bits: 16, B: 2}
	if got := s.Format(GroupID(s, "prices", "node-17")); got != "150d" {
		t.Fatalf(`GroupID("prices", "node-17") = %s, want 150d`, got)
	}
	wide := Space{Bits: 128, B: 4}
	if got := wide.Format(GroupID(wide, "prices", "node-17")); got[:4] != "150d" || len(got) != 32 {
		t.Fatalf("128-bit group id %s: want 32 hex digits starting 150d", got)
	}
}

func TestDigitsAndPrefixes(t *testing.T) {
	s := Space{Bits: 16, B: 2}
	a, _ := s.Parse("150d") // 0001 0101 0000 1101 = digits 00 01 01 01 00 00 11 01
	want := []int{0, 1, 1, 1, 0, 0, 3, 1}
	for i, w := range want {
		if got := s.Digit(a, i); got != w {
			t.Errorf("digit %d of 150d = %d, want %d", i, got, w)
		}
	}
	b, _ := s.Parse("1745") // 00 01 01 11 ...
	if got := s.SharedPrefix(a, b); got != 3 {
		t.Errorf("shared prefix of 150d and 1745 = %d digits, want 3", got)
	}
	if got := s.SharedPrefix(a, a); got != 8 {
		t.Errorf("shared prefix of 150d with itself = %d, want 8", got)
	}
	lo, span := s.PrefixRange(a, 3, 3) // 000101 11 xxxxxxxx = 1700..17ff
	if s.Format(lo) != "1700" || span != s.Unit().mul(0x100) {
		t.Errorf("prefix range = %s + %v, want 1700 + 0x100 units", s.Format(lo), span)
	}
}

func (a ID) mul(k uint64) ID {
	var r ID
	for range k {
		r = r.Add(a)
	}
	return r
}

func TestRingDistance(t *testing.T) {
	s := Space{Bits: 16, B: 2}
	x, _ := s.Parse("fff0")
	y, _ := s.Parse("0010")
	if got, want := Dist(x, y), s.Unit().mul(0x20); got != want {
		t.Fatalf("ring distance fff0..0010 = %v, want %v", got, want)
	}
	if !Closer(y, x, s.Unit().mul(0x8000)) {
		t.Fatal("fff0 should be closer to 0010 than 8000 is, around the ring")
	}
}

func TestFormatParseRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, bits := range []int{16, 32, 64, 100, 128} {
		s := Space{Bits: bits, B: 4}
		for range 100 {
			id := s.Random(r)
			back, err := s.Parse(s.Format(id))
			if err != nil || back != id {
				t.Fatalf("%d bits: %s parsed back as %s (%v)", bits, s.Format(id), s.Format(back), err)
			}
		}
	}
	if _, err := (Space{Bits: 16, B: 2}).Parse("15"); err == nil {
		t.Fatal("a 2-digit id parsed in a 16-bit space")
	}
}
