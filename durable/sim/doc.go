// Package sim is the deterministic simulator of Sift's durable layer. From
// a seed it runs PHBs (one pubend each), intermediate routers (flat: one
// router; deep: PHBs - r1 - r2 - SHBs and r1 - r3 - r4 - SHB; or a mesh as
// siftd builds one, a chain r1 - r2 - r3 or a tree r2 - r1 - r3 - r4 with
// pubends and SHBs at several routers, so that a link is upstream for some
// pubends and downstream for others), SHBs, publishers and subscribers in
// one process, over a simulated network
// and in-memory stores that model unsynced writes, injecting the faults
// named in Faults (lost, duplicated, reordered and delayed messages,
// partitions, crashes, subscribers reconnecting with older CTs or at
// another SHB, early release and dropping absent SHBs, publisher
// reconnections, PHB clocks stepping back; and, named on their own, broker
// links that block, SHBs restarting with an empty disk, full disks, an
// SHB down for most of the run (a long outage, a router that left and
// came back) and an SHB that starts partway through it (a router
// joining)).
// Every node's group commit and its handling of a store that refuses
// writes (retry, reads through the refused batch, publishes refused) is
// durable.Host, the router's own. An oracle checks exactly-once delivery
// on every run:
//
//   - within a session, each subscriber receives per pubend strictly
//     increasing ticks above the CT it presented; an event message carries
//     the logged event of its tick, which matches the subscriber's filter,
//     and no matching event lies between it and the previous message; a
//     silence message covers no matching event; a gap starts right after
//     the subscriber's CT and covers only ticks the pubend had released
//     (and, without early release, only ticks the subscriber had
//     acknowledged, a CT it presented at another SHB counting as
//     acknowledged);
//   - a pubend never releases a tick above the latestDelivered any member
//     SHB has made durable (Td), so no up-to-date subscriber can meet an L
//     tick; an SHB the pubend dropped for its absence is exempt (its
//     subscribers get gaps, rule PHB 6); with Config.LearnSHBs an SHB
//     counts from when the pubend durably made it a member, above the L
//     prefix it joined at (before, none of its subscriptions can start at
//     or below a release: an install is acknowledged only once its SHB is
//     a member, and the gap checks above catch the rest);
//   - a pubend never announces a tick again with other content (silence
//     then data, data then silence or another event), across restarts and
//     backward clock steps;
//   - each (publisher, sequence) is logged once, and only PHBs store events;
//   - after the faults heal, every publisher's events are acknowledged,
//     every subscriber catches up to the last event, the pubends release
//     everything and the PFS is chopped empty (liveness; registrations left
//     behind by subscribers that moved must have gone);
//   - nack ranges sent upstream by the routers are counted against those
//     they received from below (consolidation).
//
// Brokers are not free and links are not infinite: a broker steps one
// message per Config.StepCost of simulated time (the rest wait in its
// inbox, in order) and a broker link transmits one message per
// Config.LinkCost (a burst queues behind it), so a protocol that stalls or
// livelocks under load misses the liveness bound instead of passing.
//
// With Config.Replicas above 1 (`sift sim durable --replicas 3`), each
// pubend is replicated with Raft (package durable/replica) on that many
// PHB replicas, and the mesh follows the leader (replicas.go). Crash
// faults then also kill each pubend's leader during publishing and wipe
// one replica's disk (it rejoins empty, under a fresh raft id, from a
// snapshot); partition faults also cut links between replicas and between
// a replica and its router; replicas' clocks differ. The oracle sees each
// committed entry once and checks, besides everything above, that every
// replica applies the same entry at each index.
//
// A message the wire would refuse (a name over wire.MaxNameLen) and a run
// that floods (more than maxPending messages and timers pending) are
// violations too. A run stops at its first violation. A run is a pure function of its
// Config: the same seed replays the same run, so a failing seed is
// reproduced with `sift sim durable --seeds N..N`.
package sim
