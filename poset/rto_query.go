package poset

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sift-pubsub/sift/match"
)

// RTOConfig configures routing-table offloading. The zero value sends
// vectors of 64 filters to one client under Trust.
type RTOConfig struct {
	// VectorSize is the number of filters per vector; zero means 64.
	VectorSize int
	// Policy is how answers are used; see Policy.
	Policy Policy
	// Clients is how many clients evaluate each vector under Majority
	// (zero means 3); Trust and Verify ask one.
	Clients int
}

func (cfg RTOConfig) withDefaults() (RTOConfig, error) {
	if cfg.VectorSize == 0 {
		cfg.VectorSize = 64
	}
	if cfg.Clients == 0 {
		cfg.Clients = 3
	}
	if cfg.Policy != Majority {
		cfg.Clients = 1
	}
	if cfg.VectorSize < 0 || cfg.Clients < 0 || cfg.Policy > Verify {
		return cfg, fmt.Errorf("rto: invalid config %+v", cfg)
	}
	return cfg, nil
}

// Query is one filter vector of the layered view of the routing table,
// sent with the filter to insert. Layer 0 holds roots; layer i+1 children
// of layer i nodes that the answers so far leave relevant. Filters and
// Texts share the router's memory: receivers must not modify them, and
// they are valid until the placement's next Answer, the next StartRTO on
// the structure, or any other change to it (layer 0 shares the roots'
// lists, which an insert or delete shifts in place).
type Query struct {
	Layer  int
	Filter match.Filter // the filter being inserted
	// Text is Filter's canonical text, for the wire.
	Text string
	// Filters is the vector, and Texts their canonical texts (the wire
	// form), made once per node so a router encodes a query without
	// formatting filters.
	Filters []match.Filter
	Texts   []string
	size    int
}

// Size is the query's size in bytes on the wire: the canonical text of
// every filter with a 2-byte length, and an 8-byte header.
func (q Query) Size() int { return q.size }

// AppendWire appends the query in a simple wire form to dst: the filter's
// and then each vector filter's canonical text, each after a 2-byte
// big-endian length (texts are truncated at 65,535 bytes), after an
// 8-byte header holding the layer and the vector length. It is what Size
// counts, and what a router does per query beyond building it.
func (q Query) AppendWire(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(q.Layer))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(q.Texts)))
	dst = appendText(dst, q.Text)
	for _, t := range q.Texts {
		dst = appendText(dst, t)
	}
	return dst
}

// wireLen is the bytes appendText writes for t.
func wireLen(t string) int { return 2 + min(len(t), math.MaxUint16) }

func appendText(dst []byte, t string) []byte {
	t = t[:min(len(t), math.MaxUint16)]
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(t)))
	return append(dst, t...)
}

// Answer is a client's return vector for a query: Up marks the filters
// that cover the query's filter, Down those it covers, and Overlap those
// that may match a common event with it (match.Overlaps). The poset's
// placement descends only below overlapping filters: below a disjoint one
// no filter can be covered by the new one.
type Answer struct {
	Up, Down, Overlap Bits
}

// Size is the answer's size in bytes on the wire.
func (a Answer) Size() int { return 8 * (len(a.Up) + len(a.Down) + len(a.Overlap)) }

// Evaluate is the honest client's side of RTO: it computes the return
// vector of a query with the structures' relation, Covers.
func Evaluate(q Query) Answer {
	k := newKey(q.Filter)
	n := len(q.Filters)
	a := Answer{Up: NewBits(n), Down: NewBits(n), Overlap: NewBits(n)}
	for i, f := range q.Filters {
		kf := newKey(f)
		if relates(&kf, &k) {
			a.Up.Set(i)
		}
		if relates(&k, &kf) {
			a.Down.Set(i)
		}
		if match.Overlaps(f, q.Filter) {
			a.Overlap.Set(i)
		}
	}
	return a
}

// RTOStats describes one offloaded insertion.
type RTOStats struct {
	Rounds   int  // layers queried
	Vectors  int  // vectors sent (each to Clients clients)
	BytesOut int  // query bytes sent, all clients
	BytesIn  int  // answer bytes received, all clients
	Disputed bool // clients disagreed (Majority)
	Verified bool // the position was checked with covering tests
	Fallback bool // the router inserted the filter itself
	// Touched counts the nodes the router looked at beyond the roots:
	// children examined for the next layer (sent or left out as
	// disjoint). It is the placement's memory work, load-independent.
	Touched int
}
