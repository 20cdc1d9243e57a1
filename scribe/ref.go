package scribe

// Addr is a node's network address. The simulator uses the node's index.
type Addr int32

// NoAddr marks an empty table slot or an unknown parent.
const NoAddr Addr = -1

// Ref is what one node knows about another: its id and its address.
type Ref struct {
	ID   ID
	Addr Addr
}

// None is the empty Ref.
var None = Ref{Addr: NoAddr}

// Valid reports whether r names a node.
func (r Ref) Valid() bool { return r.Addr != NoAddr }

// Proximity measures the network distance (delay) between two nodes. Pastry
// uses it to prefer nearby nodes in its tables; the bottleneck remover uses it
// to pick the farthest child. In a deployment it is a round-trip measurement;
// in the simulator it is the topology's delay. It is an input, not something
// a node computes.
type Proximity interface {
	Distance(a, b Addr) int64
}
