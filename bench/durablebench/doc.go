// Package durablebench is the durable-delivery benchmark behind `sift
// bench durable`: durable publishers at a publisher-hosting broker (PHB),
// durable subscribers at one or two subscriber-hosting brokers (SHBs),
// Sift routers linked over QUIC on loopback in this process with their
// Pebble stores in a temporary folder and real fsync. A peer (JetStream
// durable consumers with sync_interval always, registered by a file built
// only with the build tag natspeer) runs the same events, sizes,
// publishers and subscribers in the same invocation, alternating with
// Sift run by run.
//
// # What a run does
//
// A fresh cluster; Config.Subscribers durable subscribers, each matching
// one of Config.Groups groups of events (filter group == K; JetStream
// subject ev.K), spread over the SHBs; Config.Publishers durable
// publishers at the PHB, each keeping up to Config.InFlight publishes
// unacknowledged. Three phases:
//
//   - throughput: Config.Events events as fast as the publishers go,
//     optionally with every subscriber disconnecting for Churn.For every
//     Churn.Every (staggered); it measures acknowledged publishes/s (to the
//     last acknowledgement), delivered events/s (to the last delivery), CPU
//     seconds per delivered event and the loaded latency;
//   - latency: Config.LatencyEvents events, one at a time at Config.Rate,
//     for the publish-to-deliver latency (p50, p99, p999 from a log-linear
//     histogram) of a durable event: logged and synced at the PHB, carried
//     to the SHB, logged there (PFS) and delivered;
//   - catch-up (Config.CatchupEvents > 0): every subscriber disconnects,
//     Config.CatchupEvents events are published and acknowledged, then all
//     subscribers come back at once; or, with Config.RestartSHB (Sift
//     only), the SHB router itself is stopped while the backlog builds and
//     started again. It measures the catch-up delivery rate, the phase's
//     length and the time to its first delivery (the start-up:
//     reconnecting and the first fetches). A phase under 2 s measures
//     mostly that start-up, not a rate: the report then says so in a
//     warning (Report.Warnings).
//
// Every delivery is checked: a subscriber must get exactly the events of
// its group, each once. A missing event fails the run (after Config.Stall
// without progress); a repeated one fails a Sift run (exactly-once is
// Sift's promise) and is counted as a redelivery for the peer (JetStream
// redelivers unacknowledged messages after a disconnection; the count is
// reported).
//
// # Caveats
//
//   - Everything runs in one process and shares the machine: CPU is the
//     whole process's (routers, stores, clients, subscribers); on a loaded
//     machine compare CPU per event and the alternating ratios, not the
//     absolute rates (the report records the load average).
//   - A Sift subscriber that comes back dials a new connection (QUIC and
//     TLS handshakes, then its session's start); a JetStream subscriber
//     consumes again on the connection it kept.
//   - JetStream runs as one server (one stream, replicas 1): the PHB - SHB
//     split has no counterpart there, so its events do one hop less.
//   - Sift subscribers keep their checkpoint in memory and acknowledge it
//     every AckEvery events, AckIdle after unacknowledged events, and at
//     most once a second when only silences moved it; JetStream
//     subscribers acknowledge every message. Neither fsyncs on the
//     subscriber side.
package durablebench
