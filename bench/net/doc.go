// Package netbench is the network benchmark behind `sift bench net`: it
// starts a cluster of Sift routers linked over QUIC on loopback, in this
// process, runs publishers and subscribers through it, and measures
// throughput, publish-to-deliver latency (p50, p99, p999 from a
// histogram), CPU seconds and wire bytes per delivered event. A peer
// broker (NATS, registered by a file built only with the build tag
// natspeer) runs the same workload on a cluster of the same size, in the
// same invocation, alternating with Sift run by run, so that the ratios
// compare runs made under about the same machine load.
//
// # What a run does
//
// A fresh cluster of Config.Routers routers; every subscriber (one
// connection, one filter) at the last router, the publishers at the
// first. The throughput phase publishes Config.Events events as fast as
// an end-to-end window allows (a publisher waits while the deliveries
// expected for events older than Config.Window are missing, so no system
// is measured while dropping); it ends at the last expected delivery.
// The latency phase then publishes one event at a time at Config.Rate.
// Every delivery is checked against the subscriber's filter: an
// unexpected, repeated or missing event fails the benchmark.
//
// # Promises and caveats
//
//   - Sift always runs with TLS 1.3 and client certificates; its chain is
//     r0 - r1 - ... (each router dials the one before), so an event
//     crosses every router. A NATS cluster is a full mesh: an event
//     crosses one route. The peer runs with and without TLS.
//   - CPU is the whole process's (getrusage): routers, client libraries
//     and the subscriber applications, which for NATS on the content
//     workload includes decoding and filtering every event.
//   - Wire bytes are counted where each system allows: Sift's frames
//     above QUIC (router counters), NATS's TCP payload from the kernel's
//     per-socket counters (ss). Each result records its layer.
//   - Everything shares the machine: on a loaded machine compare the
//     ratios, not the absolute figures (the report records the load).
package netbench
