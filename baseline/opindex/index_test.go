package opindex

import (
	"testing"

	"github.com/sift-pubsub/sift/baseline/baselinetest"
	"github.com/sift-pubsub/sift/match"
)

// TestAgreesWithScan: every operator and type, inserts, loads and
// deletes (so pivots chosen under changing counts), against Scan.
func TestAgreesWithScan(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		baselinetest.Check(t, seed, 3000, baselinetest.All, func() match.Index { return New() })
	}
}

func TestRegistered(t *testing.T) {
	if _, err := match.NewIndex("opindex"); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkHEM100K(b *testing.B) {
	baselinetest.BenchmarkHEM(b, 100_000, func() match.Index { return New() })
}
