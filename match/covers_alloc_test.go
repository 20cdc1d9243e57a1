package match

import "testing"

// TestCoversAllocatesNothing: a covering test of a filter of at most four
// attributes, with no !=, suffix or contains constraint (their lists are
// allocated), allocates nothing (a router runs tens of them per insert);
// with more attributes it still answers as before.
func TestCoversAllocatesNothing(t *testing.T) {
	a := MustParse(`symbol == "IBM" && price < 100`)
	b := MustParse(`symbol == "IBM" && price < 50 && volume > 10 && venue prefix "X"`)
	if !Covers(a, b) || Covers(b, a) {
		t.Fatal("wrong answers")
	}
	if n := testing.AllocsPerRun(100, func() { Covers(a, b) }); n != 0 {
		t.Fatalf("Covers allocates %v times per call", n)
	}
	wide := MustParse(`a > 1 && b > 1 && c > 1 && d > 1 && e > 1 && symbol == "IBM" && price < 50`)
	if !Covers(a, wide) || Covers(wide, a) {
		t.Fatal("wrong answers past four attributes")
	}
}
