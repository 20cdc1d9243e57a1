package sim

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/sift-pubsub/sift/scribe"
)

// Options are the inputs every report takes. Zero fields take the report's
// own defaults (see each report).
type Options struct {
	// Seed fixes every random choice: the same seed gives the same report.
	Seed uint64
	// Nodes is the number of end nodes.
	Nodes int
	// Bits, B, Leaf and Neighbours are the Pastry parameters (id width,
	// bits per digit, |L| and |M|).
	Bits       int
	B          int
	Leaf       int
	Neighbours int
	// Groups is the number of groups per size (sizes report) or the number
	// of groups (paper report, default 1,500).
	Groups int
	// Sizes are the group sizes (sizes report).
	Sizes []int
	// GroupCount and Size shape the state and small reports: GroupCount
	// groups of Size members.
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
