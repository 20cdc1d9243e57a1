package bftree

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/match/bloom/bloomtest"
)

// TestIndexAgreesWithScan runs random workloads (ranges, prefixes,
// suffixes, substrings, !=, exists, int/float mixes) through the index:
// exact results equal Scan and raw results are a superset, including at
// small m where the summary saturates and false positives abound.
func TestIndexAgreesWithScan(t *testing.T) {
	configs := []Config{
		{},
		{Bloom: bloom.Params{M: 64, K: 1}, H: 4},
		{Bloom: bloom.Params{M: 256, K: 4, Flat: true}, H: 8},
		{Bloom: bloom.Params{M: 192, K: 2, Seed: 7}, H: 3},
	}
	for i, cfg := range configs {
		t.Run(fmt.Sprintf("%d/%v/h=%d", i, cfg.Bloom.Resolved(), cfg.H), func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				bloomtest.CheckIndex(t, seed, func() match.Index {
					idx, err := NewIndex(cfg)
					if err != nil {
						t.Fatal(err)
					}
					return idx
				})
			}
		})
	}
}

func TestRegistered(t *testing.T) {
	idx, err := match.NewIndex("bftree")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := idx.(match.RawMatcher); !ok {
		t.Fatal("bftree index is not a RawMatcher")
	}
	if _, ok := idx.(match.StatsReporter); !ok {
		t.Fatal("bftree index is not a StatsReporter")
	}
}
