package sim

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/sift-pubsub/sift/scribe"
)

// Options are the inputs every report takes. Zero fields take the report's
// own defaults (see each report).
type Options struct {
	Seed       uint64
	Nodes      int
	Bits       int
	B          int
	Leaf       int
	Neighbours int
	// Groups is the number of groups per size (sizes report) or the number
	// of groups (paper report, default 1,500).
	Groups int
	// Sizes are the group sizes (sizes report).
	Sizes []int
	// GroupCount and Size shape the state report: GroupCount groups of
	// Size members.
	GroupCount int
	Size       int
	// Topology shapes the transit-stub network of the paper and small
	// reports (default DefaultTransitStub).
	Topology *TransitStubConfig
	// Progress, if set, receives a line now and then during long runs.
	Progress func(line string)
}

// Report is the result of an experiment: a value that encodes to JSON (its
// fields are the JSON document) and renders as a text table.
type Report interface {
	WriteText(w io.Writer) error
}

func (o *Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

func (o *Options) defaults(nodes, bits, b, leaf, neighbours int) {
	if o.Nodes == 0 {
		o.Nodes = nodes
	}
	if o.Bits == 0 {
		o.Bits = bits
	}
	if o.B == 0 {
		o.B = b
	}
	if o.Leaf == 0 {
		o.Leaf = leaf
	}
	if o.Neighbours == 0 {
		o.Neighbours = neighbours
	}
}

func (o *Options) topology() TransitStubConfig {
	if o.Topology != nil {
		return *o.Topology
	}
	return DefaultTransitStub
}

// rng returns the random stream for one purpose of a run. Separate streams
// keep, say, the topology identical whatever the number of groups.
func (o *Options) rng(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(o.Seed, stream)) }

// Random streams, one per purpose.
const (
	streamTopology = iota + 1
	streamIDs
	streamTables
	streamGroups
)

func (o *Options) config() scribe.Config {
	return scribe.Config{Bits: o.Bits, B: o.B, Leaf: o.Leaf, Neighbours: o.Neighbours}
}

// staticSim places o.Nodes nodes with random ids on net and builds their
// Pastry state from global knowledge.
func (o *Options) staticSim(cfg scribe.Config, net Network) (*Sim, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ids := RandomIDs(o.rng(streamIDs), cfg.Space(), net.Nodes())
	s, err := New(cfg, net, ids)
	if err != nil {
		return nil, err
	}
	o.progress("building Pastry tables for %d nodes from global knowledge", len(ids))
	BuildStatic(s, o.rng(streamTables), func(done, total int) {
		o.progress("Pastry tables: %d of %d nodes", done, total)
	})
	return s, nil
}

// ClosestLive returns the live node numerically closest to key: the root
// Pastry should deliver key to. While no node has been killed it answers
// from an index sorted by id; afterwards it scans every node.
func (s *Sim) ClosestLive(key scribe.ID) scribe.Addr {
	if s.killed == 0 {
		return s.closestIndexed(key)
	}
	best := scribe.NoAddr
	for a, n := range s.Nodes {
		if s.alive[a] && (best == scribe.NoAddr || scribe.Closer(key, n.Self().ID, s.Nodes[best].Self().ID)) {
			best = scribe.Addr(a)
		}
	}
	return best
}

func (s *Sim) closestIndexed(key scribe.ID) scribe.Addr {
	if s.byID == nil {
		s.byID = make([]scribe.Addr, len(s.Nodes))
		for i := range s.byID {
			s.byID[i] = scribe.Addr(i)
		}
		slices.SortFunc(s.byID, func(a, b scribe.Addr) int {
			x, y := s.Nodes[a].Self().ID, s.Nodes[b].Self().ID
			switch {
			case x.Less(y):
				return -1
			case y.Less(x):
				return 1
			}
			return 0
		})
	}
	n := len(s.byID)
	i, _ := slices.BinarySearchFunc(s.byID, key, func(a scribe.Addr, k scribe.ID) int {
		if s.Nodes[a].Self().ID.Less(k) {
			return -1
		}
		if k.Less(s.Nodes[a].Self().ID) {
			return 1
		}
		return 0
	})
	succ, pred := s.byID[i%n], s.byID[(i-1+n)%n]
	if scribe.Closer(key, s.Nodes[pred].Self().ID, s.Nodes[succ].Self().ID) {
		return pred
	}
	return succ
}

// newGroup creates a group named name by a random creator and returns its id.
func newGroup(s *Sim, r *rand.Rand, name string) scribe.ID {
	creator := scribe.Addr(r.IntN(len(s.Nodes)))
	key := scribe.GroupID(s.Cfg.Space(), name, fmt.Sprintf("node-%d", creator))
	s.Do(creator, func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Create(now, key, out) })
	s.Run()
	return key
}

// joinAll makes members join key one at a time, each to quiescence.
func joinAll(s *Sim, key scribe.ID, members []scribe.Addr) {
	for _, m := range members {
		s.Do(m, func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Join(now, key, out) })
		s.Run()
	}
}

// sample returns k distinct random nodes.
func sample(r *rand.Rand, n, k int) []scribe.Addr {
	if k > n {
		k = n
	}
	out := make([]scribe.Addr, 0, k)
	if k*4 > n {
		for _, i := range r.Perm(n)[:k] {
			out = append(out, scribe.Addr(i))
		}
		return out
	}
	seen := make(map[int]bool, k)
	for len(out) < k {
		if i := r.IntN(n); !seen[i] {
			seen[i] = true
			out = append(out, scribe.Addr(i))
		}
	}
	return out
}

// Summary is the mean, median and maximum of a distribution.
type Summary struct {
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

func summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Summary{Mean: sum / float64(len(s)), Median: med, Max: s[len(s)-1]}
}

// percentile returns the p-th percentile (0..100) of xs by the nearest-rank
// method.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

// writeTable renders rows under headers, columns right-aligned and separated
// by two spaces.
func writeTable(w io.Writer, headers []string, rows [][]string) error {
	width := make([]int, len(headers))
	for i, h := range headers {
		width[i] = len(h)
	}
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(strings.Repeat(" ", width[i]-len(c)))
			b.WriteString(c)
		}
		b.WriteByte('\n')
	}
	line(headers)
	for _, row := range rows {
		line(row)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func f2(x float64) string { return fmt.Sprintf("%.2f", x) }
func f1(x float64) string { return fmt.Sprintf("%.1f", x) }
