package tama

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/baseline/baselinetest"
	"github.com/sift-pubsub/sift/match"
)

// TestAgreesWithScan runs the differential suite with the default cells
// (every test value in the first leaf) and with small domains whose cells
// the test values spread over and overflow.
func TestAgreesWithScan(t *testing.T) {
	for _, cfg := range []Config{{}, {Lo: 0, Hi: 10, Levels: 3}, {Lo: -1, Hi: 3, Levels: 5}, {Lo: 0, Hi: 8, Levels: 4}, {Lo: 0, Hi: 1, Levels: 1}} {
		t.Run(fmt.Sprintf("%+v", cfg), func(t *testing.T) {
			for seed := uint64(1); seed <= 6; seed++ {
				baselinetest.Check(t, seed, 3000, baselinetest.NumericRanges, func() match.Index {
					x, err := New(cfg)
					if err != nil {
						t.Fatal(err)
					}
					return x
				})
			}
		})
	}
}

func TestConfigRefused(t *testing.T) {
	for _, cfg := range []Config{{Lo: 5, Hi: 1}, {Levels: 30}, {Levels: -1}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func TestRegistered(t *testing.T) {
	if _, err := match.NewIndex("tama"); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkHEM100K(b *testing.B) {
	baselinetest.BenchmarkHEM(b, 100_000, func() match.Index { x, _ := New(Config{}); return x })
}
