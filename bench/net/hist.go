package netbench

import (
	"math/bits"
	"time"
)

// subBits is log2 of the buckets per power of two: 32 buckets, so a
// recorded value is known within 1/32 (about 3%).
const subBits = 5

// Histogram counts durations in log-linear buckets (32 per power of two
// of nanoseconds), like HdrHistogram: quantiles are exact to about 3%
// whatever the range, in constant memory. The zero value is empty and
// ready; it is not safe for concurrent use (keep one per goroutine and
// Merge them).
type Histogram struct {
	counts [64 << subBits]uint64
	n      uint64
	max    time.Duration
}

func bucketOf(d time.Duration) int {
	v := uint64(max(d, 0))
	if v < 1<<subBits {
		return int(v)
	}
	e := bits.Len64(v) - 1
	return (e-subBits+1)<<subBits | int((v>>(e-subBits))&(1<<subBits-1))
}

// lowerBound is the smallest duration of bucket i.
func lowerBound(i int) time.Duration {
	if i < 1<<subBits {
		return time.Duration(i)
	}
	e := i>>subBits + subBits - 1
	return time.Duration((uint64(1)<<subBits | uint64(i&(1<<subBits-1))) << (e - subBits))
}

// Record adds one duration; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	h.counts[bucketOf(d)]++
	h.n++
	h.max = max(h.max, d)
}

// Merge adds every count of o into h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// Count returns the number of recorded durations.
func (h *Histogram) Count() uint64 { return h.n }

// Max returns the largest recorded duration.
func (h *Histogram) Max() time.Duration { return h.max }

// Quantile returns the q-quantile (0 < q <= 1) as the middle of its
// bucket, never above Max; zero when the histogram is empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := lowerBound(i), lowerBound(i+1)
			return min(lo+(hi-lo)/2, h.max)
		}
	}
	return h.max
}
