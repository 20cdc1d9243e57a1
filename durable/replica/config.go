package replica

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/sift-pubsub/sift/durable"
)

// Config configures one replica of a pubend. Every replica of a pubend is
// given the same Replicas and the same Pubend but for Pubend.Node and
// Pubend.SHBs, which may name the replica's own router. Zero values of the tunables take
// the defaults given on each field.
type Config struct {
	// Pubend configures the pubend the leader runs. Pubend.Node is the
	// sender of everything the pubend sends while this replica leads.
	Pubend durable.PubendConfig
	// Name is this replica's name, one of Replicas.
	Name string
	// Replicas names every replica of the pubend: the voters a new pubend
	// starts with, and the names that may join.
	Replicas []string
	// Preferred names the replica that should lead whenever it can (""
	// none): a leader that is not it hands leadership to it once it is a
	// voter caught up with the log (prefer.go). Give it every replica
	// alike, naming the replica nearest the pubend's publishers and SHBs.
	Preferred string
	// Join, for a replica whose store is empty, makes it start under a
	// fresh raft id and ask the leader to replace its name's old id,
	// instead of bootstrapping: its disk was wiped, or it is new. A
	// replica that lost its store must join: coming back under its old id
	// it would vote having forgotten what it acknowledged. With a store
	// that is not empty, Join is ignored.
	Join bool
	// Rand draws election timeouts and fresh ids (required).
	Rand *rand.Rand
	// TickPeriod is the time of one raft tick (default 10 ms).
	TickPeriod durable.Tick
	// ElectionTicks is the election timeout in raft ticks (default 10): a
	// follower that hears no leader for a random time between one and two
	// timeouts campaigns. HeartbeatTicks is the leader's heartbeat period
	// (default 1).
	ElectionTicks, HeartbeatTicks int
	// QuorumTicks is the leader's quorum check period in raft ticks
	// (default 3 × ElectionTicks): a leader that has not heard from a
	// majority for that long stops being the PHB (quorum.go). Longer than
	// an election timeout, so that followers slow to answer under load (a
	// slow sync holds their answers) do not make it step down.
	QuorumTicks int
	// CompactEvery is how many applied entries the log may hold before it
	// is compacted (default 1024); CompactKeep how many applied entries a
	// compaction keeps, for followers slightly behind (default 256).
	CompactEvery, CompactKeep uint64
	// MaxUncommitted bounds the bytes of proposals not yet committed
	// (default 16 MiB); beyond it the leader stops serving until the log
	// catches up (a leader cut off from the others stops growing).
	MaxUncommitted uint64
	// MaxMsgSize bounds the log entries of one raft message in bytes
	// (default 1 MiB; a message carries at least one entry). A snapshot
	// is one raft message whatever its size, sent in chunks.
	MaxMsgSize uint64
	// CatchUpEntries is how far a learner's log may be behind the
	// leader's commit, in entries, for the learner to be promoted to
	// voter (default 64; learner.go).
	CatchUpEntries uint64
	// MaxChunk bounds the peer messages a replica sends, in bytes
	// (default 256 KiB): a larger one (a snapshot) goes in chunks of at
	// most this size (chunks.go).
	MaxChunk uint64
}

func (c *Config) populate() error {
	if c.Name == "" || !slices.Contains(c.Replicas, c.Name) {
		return fmt.Errorf("replica config: name %q is not one of the replicas %v", c.Name, c.Replicas)
	}
	if c.Rand == nil {
		return errors.New("replica config: Rand is required")
	}
	if c.Pubend.ID == "" || c.Pubend.Node == "" {
		return errors.New("replica config: Pubend.ID and Pubend.Node are required")
	}
	if len(c.Pubend.ID) > maxPeerName || len(c.Name) > maxPeerName {
		return fmt.Errorf("replica config: names are at most %d bytes", maxPeerName)
	}
	seen := map[uint64]string{}
	for _, r := range c.Replicas {
		if o, dup := seen[nameID(r)]; dup {
			return fmt.Errorf("replica config: replicas %q and %q share a raft id", o, r)
		}
		seen[nameID(r)] = r
	}
	if c.TickPeriod <= 0 {
		c.TickPeriod = 10_000
	}
	if c.ElectionTicks <= 0 {
		c.ElectionTicks = 10
	}
	if c.QuorumTicks <= 0 {
		c.QuorumTicks = 3 * c.ElectionTicks
	}
	if c.HeartbeatTicks <= 0 {
		c.HeartbeatTicks = 1
	}
	if c.CompactEvery == 0 {
		c.CompactEvery = 1024
	}
	if c.CompactKeep == 0 {
		c.CompactKeep = 256
	}
	c.CompactKeep = min(c.CompactKeep, c.CompactEvery)
	if c.MaxMsgSize == 0 {
		c.MaxMsgSize = 1 << 20
	}
	if c.CatchUpEntries == 0 {
		c.CatchUpEntries = 64
	}
	if c.MaxChunk == 0 {
		c.MaxChunk = 256 << 10
	}
	if c.MaxChunk < 1024 {
		return fmt.Errorf("replica config: MaxChunk %d is below 1 KiB", c.MaxChunk)
	}
	if c.MaxUncommitted == 0 {
		c.MaxUncommitted = 16 << 20
	}
	return nil
}

// nameID is the raft id a replica starts under: a hash of its name with
// the top bit clear. Fresh ids (after a wipe) have the top bit set, so
// they never collide with a name's.
func nameID(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return max(h.Sum64()&^(1<<63), 1)
}

func freshID(r *rand.Rand) uint64 { return r.Uint64() | 1<<63 }
