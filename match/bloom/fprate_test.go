package bloom_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sift-pubsub/sift/match/bloom"
)

// TestFalsePositiveRate measures the false-positive rate of single
// filters holding n random keys and checks it against
// (1 - e^(-kn/m))^k within four standard errors, where the standard error
// is estimated from the spread of the per-filter rates (probes of one
// filter are correlated through its fill). The textbook formula is itself
// an approximation that runs low for small m (Bose et al., 2008), so the
// bound is widened by its distance to the exact expectation, and the
// measurement must also agree with the exact expectation alone.
func TestFalsePositiveRate(t *testing.T) {
	const filters, probes = 400, 400
	cases := []struct{ m, k, n uint }{
		{128, 2, 20}, {256, 1, 100}, {512, 4, 60}, {1024, 3, 150}, {1024, 7, 100},
	}
	r := rand.New(rand.NewPCG(2026, 4))
	for _, c := range cases {
		p := bloom.Params{M: c.m, K: c.k}
		var sum, sumSq float64
		for range filters {
			b := p.NewFilter()
			for range c.n {
				p.AddKey(b, r.Uint64())
			}
			hits := 0
			for range probes {
				if p.TestKey(b, r.Uint64()) {
					hits++
				}
			}
			rate := float64(hits) / probes
			sum += rate
			sumSq += rate * rate
		}
		mean := sum / filters
		se := math.Sqrt((sumSq/filters - mean*mean) / (filters - 1))
		want := bloom.ExpectedFPRate(c.m, c.k, c.n)
		exact := exactFPRate(c.m, c.k, c.n)
		t.Logf("m=%d k=%d n=%d: measured %.5f ± %.5f, formula %.5f, exact %.5f", c.m, c.k, c.n, mean, se, want, exact)
		if math.Abs(mean-exact) > 4*se {
			t.Errorf("m=%d k=%d n=%d: measured %.5f, exact expectation %.5f, beyond 4 standard errors (%.5f)", c.m, c.k, c.n, mean, exact, se)
		}
		if math.Abs(mean-want) > 4*se+math.Abs(exact-want) {
			t.Errorf("m=%d k=%d n=%d: measured %.5f, formula %.5f, beyond 4 standard errors (%.5f) plus the formula's bias", c.m, c.k, c.n, mean, want, se)
		}
	}
}

// exactFPRate is the exact false-positive probability when the k*n stored
// positions and the k probe positions are independent and uniform: the
// probe hits j distinct bits with probability S(k,j) m!/(m-j)!/m^k, and j
// given bits are all set after N = k*n throws with probability
// sum_i (-1)^i C(j,i) (1-i/m)^N.
func exactFPRate(m, k, n uint) float64 {
	fm, throws := float64(m), float64(k*n)
	total := 0.0
	for j := uint(1); j <= k; j++ {
		hit := stirling2(k, j)
		for i := uint(0); i < j; i++ {
			hit *= (fm - float64(i)) / fm
		}
		hit /= math.Pow(fm, float64(k-j))
		allSet := 0.0
		for i := uint(0); i <= j; i++ {
			sign := 1.0
			if i%2 == 1 {
				sign = -1
			}
			allSet += sign * binomial(j, i) * math.Pow(1-float64(i)/fm, throws)
		}
		total += hit * allSet
	}
	return total
}

func stirling2(n, k uint) float64 {
	if n == k {
		return 1
	}
	if k == 0 || k > n {
		return 0
	}
	return float64(k)*stirling2(n-1, k) + stirling2(n-1, k-1)
}

func binomial(n, k uint) float64 {
	r := 1.0
	for i := uint(0); i < k; i++ {
		r = r * float64(n-i) / float64(i+1)
	}
	return r
}
