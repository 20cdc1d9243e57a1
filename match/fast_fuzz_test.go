package match

import (
	"slices"
	"testing"
)

// FuzzFastPivot runs a script decoded from the input against Fast and Scan
// and fails when they disagree: inserts of pivot-heavy filters (see
// pivotGen), deletes, compactions and matches, on an index with a tiny
// tail so that segments are built, merged and rebuilt often.
//
//	go test -run XXX -fuzz FuzzFastPivot -fuzztime 20s ./match
func FuzzFastPivot(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x00\x02\x03\x03\x03"))
	f.Add(slices.Repeat([]byte{0, 3, 7, 1, 0, 9, 2, 3, 5}, 30))
	f.Fuzz(func(t *testing.T, script []byte) {
		src := byteSource{b: script}
		g := pivotGen{intn: src.intn}
		idx := NewFast(FastConfig{TailSize: 1 + src.intn(16), MergeFactor: 2 + src.intn(3), MaxCells: src.intn(8)})
		ref := NewScan()
		var live []ID
		next := ID(0)
		for len(src.b) > 0 {
			switch src.intn(8) {
			case 0, 1, 2, 3:
				fl := g.filter()
				if err := idx.Insert(next, fl); err != nil {
					t.Fatal(err)
				}
				ref.Insert(next, fl)
				live = append(live, next)
				next++
			case 4:
				if len(live) > 0 {
					i := src.intn(len(live))
					if err := idx.Delete(live[i]); err != nil {
						t.Fatal(err)
					}
					ref.Delete(live[i])
					live = slices.Delete(live, i, i+1)
				}
			case 5:
				idx.Compact()
			default:
				e := g.event()
				got := SortIDs(idx.Match(e, nil))
				want := SortIDs(ref.Match(e, nil))
				if !slices.Equal(got, want) {
					t.Fatalf("event %v: fast %v, scan %v", e, got, want)
				}
			}
		}
	})
}

// byteSource draws numbers from a fuzzer's bytes, then zeros once they run
// out.
type byteSource struct{ b []byte }

func (s *byteSource) intn(n int) int {
	if len(s.b) == 0 || n <= 1 {
		return 0
	}
	v := int(s.b[0])
	s.b = s.b[1:]
	return v % n
}
