package match

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPointTableAgreesWithMap checks the pivot point table against a Go
// map holding the same points: every point added is found with its span
// and cut, and values never added (absent, empty, sharing a prefix with a
// point) are not, at sizes around the table's growth steps (where probe
// runs are longest).
func TestPointTableAgreesWithMap(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		for _, n := range []int{0, 1, 2, 3, 7, 42, 43, 85, 86, 1000, 5461} {
			for _, withCuts := range []bool{false, true} {
				t.Run(fmt.Sprintf("seed=%d/n=%d/cuts=%v", seed, n, withCuts), func(t *testing.T) {
					checkPointTable(t, seed, n, withCuts)
				})
			}
		}
	}
}

func checkPointTable(t *testing.T, seed uint64, n int, withCuts bool) {
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	want := make(map[string]pivotPoint, n)
	pt := newPointTable[string](n, withCuts)
	for len(want) < n {
		k := fmt.Sprintf("v%d", r.IntN(4*n))
		if _, ok := want[k]; ok {
			continue
		}
		lo := r.Uint32N(1 << 20)
		p := pivotPoint{span: slotSpan{lo, lo + 1 + r.Uint32N(9)}}
		c := pointCut{cell: r.Int32N(50), lo: boundCut{r.Int32N(9), r.Int32N(9)}, hi: boundCut{r.Int32N(9), r.Int32N(9)}}
		if withCuts {
			p.cell, p.lo, p.hi = c.cell, c.lo, c.hi
		}
		want[k] = p
		pt.add(k, p.span, c)
	}
	for k, p := range want {
		if got, ok := pt.find(k); !ok || got != p {
			t.Fatalf("find(%q) = %+v, %v; want %+v", k, got, ok, p)
		}
	}
	for i := range 8*n + 8 {
		k := fmt.Sprintf("v%d", i)
		if i%3 == 0 {
			k = fmt.Sprintf("v%dx", i)
		}
		if _, in := want[k]; in {
			continue
		}
		if got, ok := pt.find(k); ok {
			t.Fatalf("find(%q) = %+v, want absent", k, got)
		}
	}
	if _, ok := pt.find(""); ok {
		t.Fatalf(`find("") found a point`)
	}
	var none *pointTable[string]
	if _, ok := none.find("v0"); ok {
		t.Fatalf("a nil table found a point")
	}
}
