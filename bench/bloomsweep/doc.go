// Package bloomsweep is the regime benchmark behind `sift bench bloom`:
// where Bloom forwarding pays and where exact forwarding does. It sweeps
// the terms per event (the summary's size), the filters per link and the
// chain length, and measures, for each point, both modes' work at each
// role of a chain (first router, inner router, last router), the bytes
// each puts on a link, and the Bloom false-positive rate against the
// formula (1 - e^(-kn/m))^k.
//
// # What a point measures
//
// The routers' own data structures, driven directly, without QUIC: the
// wire decoder, match.Fast (the exact index routers match with), the
// constraint dictionary and the per-link trees of router/bloomfwd, and the
// BloomPublish encoding. Every link of the chain carries the same filters
// (the subscribers are at the last router, as in `sift bench net`), so a
// point's per-hop figures hold at every hop, and a chain of L routers
// costs first + (L-2) inner hops + last, each inner and the last router
// seeing only the events the hop before forwarded. In exact mode an inner
// router of a chain decides by the witness the event came with (one
// filter checked, router/linktable.go); where the witness does not
// decide (a branch), it matches against its index: both are measured.
// QUIC's cost per byte
// is the same in both modes and is left out; the bytes per event say how
// it differs.
//
// Events carry Terms integer attributes a0, a1, ... with values in
// [0, V); a filter is three equalities on distinct attributes; V is
// chosen so that about Config.Hit of the events match some filter of the
// link. The dictionary holds every `ai == v` (the terms of the link's
// filters and of subscriptions elsewhere), so each event's summary holds
// exactly Terms terms.
//
// # Promises and caveats
//
//   - No false negatives: a point fails if Bloom forwarding drops an
//     event that a filter matches.
//   - CPU is the measuring goroutine's thread CPU (locked to its thread),
//     exact and Bloom alternating Config.Rounds times, medians reported;
//     the garbage collector's background work on other threads is not in
//     it. On a loaded machine compare the ratios.
//   - The false-positive rate is measured on probe filters with exactly
//     one unmet constraint (the formula's case) against unsaturated
//     summaries; the link-level rate (events no filter matches that the
//     tree forwards) is reported beside it.
package bloomsweep
