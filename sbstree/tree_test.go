package sbstree

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/match/bloom/bloomtest"
)

// TestTreeMatchesBruteForce checks Match against a subset test over every
// stored filter across random inserts and deletes.
func TestTreeMatchesBruteForce(t *testing.T) {
	bloomtest.CheckTree(t, []int{64, 128, 512}, func(m int) bloom.Tree {
		tr, err := New(m)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	})
}

// TestIndexAgreesWithScan: exact results equal Scan, raw results are a
// superset, on random workloads, for several parameter sets.
func TestIndexAgreesWithScan(t *testing.T) {
	for _, p := range []bloom.Params{{}, {M: 64, K: 1}, {M: 512, K: 6, Flat: true}, {M: 128, K: 3, Seed: 99}} {
		t.Run(p.Resolved().String(), func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				bloomtest.CheckIndex(t, seed, func() match.Index {
					idx, err := NewIndex(p)
					if err != nil {
						t.Fatal(err)
					}
					return idx
				})
			}
		})
	}
}

func TestNewRejectsBadM(t *testing.T) {
	for _, m := range []int{0, -1, 1<<16 + 1} {
		if _, err := New(m); err == nil {
			t.Errorf("New(%d) succeeded", m)
		}
	}
}
