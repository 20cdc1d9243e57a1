package workload

import (
	"math"
	"math/rand/v2"
	"sort"
)

// zipf draws ranks 0..n-1 with probability proportional to 1/(rank+1)^s.
// s = 0 is uniform and costs no table; any s >= 0 is allowed (unlike
// math/rand's Zipf, which needs s > 1).
type zipf struct {
	n   int
	cdf []float64 // cumulative weights, nil when uniform
}

// newZipf returns a sampler over n ranks with skew s.
func newZipf(n int, s float64) zipf {
	if s == 0 || n <= 1 {
		return zipf{n: n}
	}
	cdf := make([]float64, n)
	total := 0.0
	for k := range n {
		total += math.Pow(float64(k+1), -s)
		cdf[k] = total
	}
	for k := range cdf {
		cdf[k] /= total
	}
	return zipf{n: n, cdf: cdf}
}

// draw returns one rank.
func (z zipf) draw(r *rand.Rand) int {
	if z.cdf == nil {
		return r.IntN(z.n)
	}
	u := r.Float64()
	k := sort.SearchFloat64s(z.cdf, u)
	if k >= z.n {
		k = z.n - 1
	}
	return k
}

// weight returns the probability of rank k.
func (z zipf) weight(k int) float64 {
	if z.cdf == nil {
		return 1 / float64(z.n)
	}
	if k == 0 {
		return z.cdf[0]
	}
	return z.cdf[k] - z.cdf[k-1]
}

// sample returns m distinct ranks drawn without replacement, each draw
// proportional to the Zipf weights of the ranks left (Efraimidis-Spirakis
// keys u^(1/w)), in increasing rank order. m must not exceed n.
func (z zipf) sample(r *rand.Rand, m int) []int {
	if m >= z.n {
		all := make([]int, z.n)
		for i := range all {
			all[i] = i
		}
		return all
	}
	if z.cdf == nil {
		return partialShuffle(r, z.n, m)
	}
	type keyed struct {
		key  float64
		rank int
	}
	keys := make([]keyed, z.n)
	for k := range keys {
		// log(u)/w orders like u^(1/w) and does not underflow.
		keys[k] = keyed{key: math.Log(r.Float64()) / z.weight(k), rank: k}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].key > keys[j].key })
	out := make([]int, m)
	for i := range out {
		out[i] = keys[i].rank
	}
	sort.Ints(out)
	return out
}

// newRand returns the PCG generator of one stream of a seed.
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// partialShuffle returns m distinct uniform ranks of n, in increasing order.
func partialShuffle(r *rand.Rand, n, m int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := range m {
		j := i + r.IntN(n-i)
		p[i], p[j] = p[j], p[i]
	}
	out := p[:m]
	sort.Ints(out)
	return out
}
