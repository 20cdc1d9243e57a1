package betree

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/baseline/baselinetest"
	"github.com/sift-pubsub/sift/match"
)

// TestAgreesWithScan runs the differential suite (every operator and
// type) with the default tree, and with tiny leaves and small domains
// that force many bucket splits and partitions.
func TestAgreesWithScan(t *testing.T) {
	for _, cfg := range []Config{{}, {Lo: 0, Hi: 10, Capacity: 1, MaxDepth: 4}, {Lo: -1, Hi: 3, Capacity: 2}, {Lo: 0, Hi: 8, Capacity: 3, MaxDepth: 1}} {
		t.Run(fmt.Sprintf("%+v", cfg), func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				baselinetest.Check(t, seed, 2000, baselinetest.All, func() match.Index {
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
	for _, cfg := range []Config{{Lo: 5, Hi: 1}, {Capacity: -1}, {MaxDepth: 99}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func TestRegistered(t *testing.T) {
	if _, err := match.NewIndex("betree"); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkHEM100K(b *testing.B) {
	baselinetest.BenchmarkHEM(b, 100_000, func() match.Index { x, _ := New(Config{}); return x })
}
