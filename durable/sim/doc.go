// Package sim is the deterministic simulator of Sift's durable layer. From
// a seed it runs PHBs (one pubend each), an intermediate router, SHBs,
// publishers and subscribers in one process, over a simulated network and
// in-memory stores that model unsynced writes, injecting the faults named in
// Faults. An oracle checks exactly-once delivery on every run:
//
//   - within a session, each subscriber receives per pubend strictly
//     increasing ticks above the CT it presented; an event message carries
//     the logged event of its tick, which matches the subscriber's filter,
//     and no matching event lies between it and the previous message; a
//     silence message covers no matching event; a gap covers only ticks the
//     pubend had released (and, without early release, only ticks the
//     subscriber had acknowledged);
//   - a pubend never releases a tick above the latestDelivered any SHB has
//     made durable (Td), so no up-to-date subscriber can meet an L tick;
//   - each (publisher, sequence) is logged once, and only PHBs store events;
//   - after the faults heal, every publisher's events are acknowledged,
//     every subscriber catches up to the last event, the pubends release
//     everything and the PFS is chopped empty (liveness);
//   - nack ranges sent upstream by the router are counted against those it
//     received from below (consolidation).
//
// A run stops at its first violation. A run is a pure function of its Config: the same seed replays the same
// run, so a failing seed is reproduced with `sift sim durable --seeds N..N`.
package sim
