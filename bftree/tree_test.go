package bftree

import (
	"testing"

	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/match/bloom/bloomtest"
)

// TestTreeMatchesBruteForce checks Match against a subset test over every
// stored filter across random inserts and deletes, for part widths that
// are whole words, sub-word and straddling word boundaries.
func TestTreeMatchesBruteForce(t *testing.T) {
	for _, h := range []int{1, 2, 3, 4, 8} {
		t.Run("h="+itoa(h), func(t *testing.T) {
			ms := []int{64 * h, 128 * h, 192 * h} // parts of 1, 2 and 3 words
			bloomtest.CheckTree(t, ms, func(m int) bloom.Tree {
				tr, err := New(m, h)
				if err != nil {
					t.Fatal(err)
				}
				return tr
			})
		})
	}
}

func TestNewRejectsIndivisibleM(t *testing.T) {
	for _, c := range []struct{ m, h int }{{128, 3}, {0, 1}, {64, 0}, {-64, 2}} {
		if _, err := New(c.m, c.h); err == nil {
			t.Errorf("New(%d, %d) succeeded", c.m, c.h)
		}
	}
}

func TestExtractStraddlesWords(t *testing.T) {
	src := []uint64{0xF000_0000_0000_000F, 0x0000_0000_0000_00A5}
	dst := make([]uint64, 1)
	for _, c := range []struct {
		w    int
		want uint64
	}{{12, 0xA5F}, {8, 0x5F}, {4, 0xF}} {
		extract(src, 60, c.w, dst)
		if dst[0] != c.want {
			t.Errorf("extract(60, %d) = %#x, want %#x", c.w, dst[0], c.want)
		}
	}
}

func itoa(i int) string { return string(rune('0'+i/10%10)) + string(rune('0'+i%10)) }
