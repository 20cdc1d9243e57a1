// Package router owns Sift's routers and their clients over QUIC: the
// transport (quic-go, TLS 1.3 with ALPN sift/1 and mutual TLS against the
// deployment CA, one quic.Transport per UDP socket with a stateless-reset
// key kept in the data folder), the connection handshake, the matching
// loop and the per-connection writers, and the operational endpoints
// (Prometheus metrics, health, subscription summary). The client library is
// router/client; the wire format is internal/wire.
//
// # Structure
//
// Each connection has a control stream (Hello/Welcome, Subscribe,
// Unsubscribe, Ack, Error) and a data stream (Publish in, Deliver out), so
// control never waits behind data. Connection readers feed one matching
// loop goroutine, which drives router/core, the router's core as a pure
// state machine (clients' subscriptions in the engine over a match.Index,
// the mesh, Bloom, the link table, RTO and FF, and the event path). Every
// input a reader hands the loop is one of the core's typed inputs (a batch
// of events included), with what only the shell knows of it, or a query of
// the shell's own state (loop.go); the loop steps the core, ticks it when
// the timer on its deadline fires, and carries out the effects the core
// returns (coreloop.go): deliveries encoded, frames queued, connections
// closed, metrics counted. It never blocks on a socket: it queues outputs
// on each connection's bounded send queue, drained by that connection's
// writer.
//
// Routers link into an acyclic mesh (Config.MaxLinks, Peers): a link is a
// QUIC connection whose first control frame is a LinkHello; its control
// stream carries the router/mesh protocol (Reach, Routes, RoutesAck) and
// its data stream LinkPublish batches both ways. The core holds the
// router/mesh state machine next to the engine: client subscriptions are
// propagated over links (pruned by covering) and acknowledged once mesh
// reports them Ready; each event goes to the local clients the engine
// matches and to the links whose filters match it, never back where it
// came from. The link decision uses a second fast index over the filters
// each neighbour sent (the link table, mirrored from the Routes the mesh
// accepted). Each forwarded event carries a witness: the hash of one of
// the receiver's filters it matched. A router whose every onward link
// holds the witnessed filter, if the event matches that one filter,
// forwards to them without its index (the inner routers of a chain); a
// false witness decides nothing, and only a 64-bit hash collision could
// send an event a hop too far, never lose one (linktable.go). Failing
// that, a filter that matched an earlier event with the same value of the
// table's key attribute, if the event matches it, decides without the
// index (linkcache.go). Link data streams are read with wire.LinkSlack
// above MaxFrame, so the largest event a client may publish crosses links
// between routers of the same MaxFrame. Dialled peers are redialled with
// backoff; every (re)connect resynchronises both sides by snapshot.
//
// With Config.Forward = bloom (router/bloomfwd) the first router matches
// an event exactly, as in exact mode, and sends the events it forwards
// with a Bloom summary (BloomPublish, the raw event bytes unchanged);
// inner routers forward on the summary alone, with one
// sbstree or bftree per link, and decode an event only to deliver it
// locally, exactly. The constraint dictionary is flooded over the link
// tree ahead of the mesh's messages, so a Ready subscription's terms are
// at every router. Saturated summaries fall back to exact routing.
//
// With Config.RTO (siftd --rto) clients that offer assistance (client
// Options.Assist) answer the covering queries that place their filters in
// the routing table, checked as the policy says (router/core/assist.go); fixed
// filters (--ff) let them claim a covering filter up front.
//
// Durable subscriptions (router/durable*.go) run the durable package's
// brokers (pubend, intermediate router, SHB) in a driver of their own
// beside the matching loop, with state in Pebble under the data folder;
// their messages ride the same control streams.
//
// # Promises
//
// A plain subscriber receives every event that matches one of its
// subscriptions once (one Deliver item listing all its matching
// subscription ids), in publish order per publisher. A subscriber whose
// send queue overflows is disconnected as a slow consumer (QUIC
// application error CodeSlowConsumer, a log line and
// sift_router_slow_consumers_total), never blocking publishers or other
// subscribers. A malformed filter, a duplicate id or a full connection gets
// an Error frame and installs nothing; a malformed, oversized or unexpected
// frame, or a version mismatch, closes that connection with an error code
// and a log line and affects nobody else. A publish batch is acknowledged
// once it has been routed; on shutdown every batch already read is routed
// and queued deliveries drain for a bounded grace period.
//
// # Caveats
//
// Plain delivery is at most once: a disconnected subscriber loses what was
// queued for it, and so do routers cut off while a link is down; durable
// subscriptions are the exactly-once path. Exact and Bloom routers do not
// link with each other (their hellos disagree and the link is refused).
package router
