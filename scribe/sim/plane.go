package sim

import (
	"math"
	"math/rand/v2"

	"github.com/sift-pubsub/sift/scribe"
)

// PlaneScale is the number of delay units per unit of distance in the plane.
const PlaneScale = 1000

// Plane places nodes uniformly at random in a square; the delay between two
// nodes is their Euclidean distance times PlaneScale, rounded.
type Plane struct {
	X, Y []float64
}

// NewPlane places n nodes uniformly in a side x side square.
func NewPlane(r *rand.Rand, n int, side float64) *Plane {
	p := &Plane{X: make([]float64, n), Y: make([]float64, n)}
	for i := range n {
		p.X[i], p.Y[i] = r.Float64()*side, r.Float64()*side
	}
	return p
}

// Nodes implements Network.
func (p *Plane) Nodes() int { return len(p.X) }

// Euclid is the plane distance between a and b.
func (p *Plane) Euclid(a, b scribe.Addr) float64 {
	return math.Hypot(p.X[a]-p.X[b], p.Y[a]-p.Y[b])
}

// Distance implements scribe.Proximity.
func (p *Plane) Distance(a, b scribe.Addr) int64 {
	return int64(math.Round(p.Euclid(a, b) * PlaneScale))
}
