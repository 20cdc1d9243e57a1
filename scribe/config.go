package scribe

import "fmt"

// Time is a simulated instant or duration in the caller's unit (the
// simulator uses microseconds on router topologies and thousandths of a
// distance unit in the plane). Nodes only compare and add times.
type Time int64

// Config holds the parameters shared by every node of one overlay. The zero
// value of each field selects the default written beside it; call
// [Config.WithDefaults] and [Config.Validate] before use.
type Config struct {
	// Bits is the id width (default 128).
	Bits int
	// B is the number of bits per digit (default 4).
	B int
	// Leaf is |L|, the leaf set size, split evenly between the two sides of
	// the node on the ring (default 16).
	Leaf int
	// Neighbours is |M|, the neighbourhood set size (default 32).
	Neighbours int
	// Replicas is k, the number of nodes closest to a group id that hold a
	// copy of its root state (default 5).
	Replicas int
	// MaxChildren caps the children entries of a node across all its groups;
	// a node over the cap hands its farthest child to a sibling (the
	// bottleneck remover). Zero disables the remover.
	MaxChildren int
	// HeartbeatInterval is how often a parent that sent nothing else tells
	// its children it is alive. Zero disables heartbeats and failure
	// detection by timeout.
	HeartbeatInterval Time
	// HeartbeatTimeout is how long a child waits without hearing from its
	// parent before it rejoins (default 3 heartbeat intervals).
	HeartbeatTimeout Time
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Bits == 0 {
		c.Bits = 128
	}
	if c.B == 0 {
		c.B = 4
	}
	if c.Leaf == 0 {
		c.Leaf = 16
	}
	if c.Neighbours == 0 {
		c.Neighbours = 32
	}
	if c.Replicas == 0 {
		c.Replicas = 5
	}
	if c.HeartbeatTimeout == 0 {
		c.HeartbeatTimeout = 3 * c.HeartbeatInterval
	}
	return c
}

// Validate reports the first unusable parameter.
func (c Config) Validate() error {
	if err := c.Space().Validate(); err != nil {
		return fmt.Errorf("scribe config: %w", err)
	}
	switch {
	case c.Leaf < 2 || c.Leaf%2 != 0:
		return fmt.Errorf("scribe config: leaf set size %d: want an even number >= 2", c.Leaf)
	case c.Neighbours < 0:
		return fmt.Errorf("scribe config: neighbourhood set size %d is negative", c.Neighbours)
	case c.Replicas < 0:
		return fmt.Errorf("scribe config: replica count %d is negative", c.Replicas)
	case c.MaxChildren < 0 || c.MaxChildren == 1:
		return fmt.Errorf("scribe config: children cap %d: want 0 (off) or >= 2", c.MaxChildren)
	case c.HeartbeatInterval < 0 || c.HeartbeatTimeout < 0:
		return fmt.Errorf("scribe config: negative heartbeat interval or timeout")
	}
	return nil
}

// Space returns the id space the configuration describes.
func (c Config) Space() Space { return Space{Bits: c.Bits, B: c.B} }
