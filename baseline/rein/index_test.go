package rein

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/baseline/baselinetest"
	"github.com/sift-pubsub/sift/match"
)

// TestAgreesWithScan runs the differential suite with the default
// buckets (every test value in one or two of them) and with small domains
// that spread test values over many buckets and put some outside.
func TestAgreesWithScan(t *testing.T) {
	for _, cfg := range []Config{{}, {Lo: 0, Hi: 10, Buckets: 4}, {Lo: -1, Hi: 3, Buckets: 7}, {Lo: 0, Hi: 1, Buckets: 1}} {
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
	for _, cfg := range []Config{{Lo: 5, Hi: 1}, {Buckets: -1}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func TestRegistered(t *testing.T) {
	if _, err := match.NewIndex("rein"); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkHEM100K(b *testing.B) {
	baselinetest.BenchmarkHEM(b, 100_000, func() match.Index { x, _ := New(Config{}); return x })
}
