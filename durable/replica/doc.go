// Package replica replicates one pubend on several routers with Raft
// (go.etcd.io/raft/v3), so that a pubend survives the loss of a machine:
// a durable publish is acknowledged only once the state change that logs
// it is committed, that is synced on a majority of the replicas.
//
// # Basics
//
// The replicated state machine is the pubend's store. The leader runs an
// ordinary durable.Pubend; every batch of writes it asks for (ticks
// assigned and the high-water mark, log entries, the publisher dedup table,
// release reports and the L prefix) becomes one Raft proposal, and every
// replica applies committed proposals, in log order, to its own copy of
// the pubend's keys. The pubend reads its own proposals before they commit
// through an overlay, and the messages of each of its Readies (acks, data,
// silence, lost, nack answers) leave only once every proposal made up to
// that Ready has committed. So whatever a publisher, an SHB or a router
// hears from the leader is committed state, and the pubend's own rules
// (T1, PHB 2 to 6 in docs/durable.md) hold across leaders as they hold
// across restarts: a new leader recovers a pubend from the committed
// store, exactly as a restarted PHB does, after its fence entry (a
// proposal of its own term) has been applied, so that every entry an
// earlier leader may have had committed is in the state it recovers. It
// then assigns ticks above the committed high-water mark: no tick is
// assigned twice, and none is announced and then lost.
//
// A Replica is a pure state machine, like the brokers of package durable:
// Step (a pubend message), StepPeer (a message from another replica) and
// Tick (the timer), each with the time passed in, and Ready to collect the
// effects: writes to apply to the store (before the next Step) and, when
// Ready.Sync is set, to sync; then the messages to send; then Advance.
// There are no goroutines, clocks or global random sources inside: raft's
// own election timer is randomized with crypto/rand, so a follower never
// ticks raft; the Replica runs the election timer itself from the seeded
// Config.Rand and campaigns when it fires.
//
// # Storage
//
// The raft log, its hard state, the applied index and the pubend's state
// share one durable.Store under a per-pubend prefix (keys.go), written in
// one atomic batch per Ready, so a crash that loses unsynced writes loses
// a suffix of Readies and the applied state never runs ahead of the log.
// The log is compacted behind the applied index; a replica that is too far
// behind (or empty) gets a snapshot: every key of the pubend's state,
// sent in chunks of at most Config.MaxChunk bytes (chunks.go).
//
// # Membership
//
// A replica starts from Config.Replicas; each is a voter whose raft id is
// derived from its name. A replica whose disk was wiped must not come back
// under its old id (it would vote having forgotten what it acknowledged,
// and could elect a leader lacking committed events): it starts with a
// fresh id and asks to join; the leader replaces the old id by the new one
// in one joint-consensus change (ConfChangeV2), and the new member
// catches up from a snapshot.
//
// # Quorum check
//
// Raft's CheckQuorum is off (it needs followers to tick raft). The leader
// runs the same check itself (quorum.go): a leader that has not heard
// from a majority for Config.QuorumTicks stops being the PHB, and runs
// the pubend again only once a new fence commits.
package replica
