// Package httpapi is Sift's HTTP gateway: it makes a router usable from
// curl, browsers and programs in any language, next to the QUIC listener.
//
//   - POST /v1/publish takes a JSON event, JSON Lines of events, or a
//     CloudEvent (structured mode, Content-Type
//     application/cloudevents+json or application/cloudevents-batch+json,
//     or binary mode, ce-* headers) and answers {"accepted":N} once the
//     router accepted every event; ?durable=1 answers only once the events
//     are logged and synced at their pubend.
//   - GET /v1/subscribe?filter=F streams the matching events as
//     Server-Sent Events, one data: line per event holding the event as a
//     JSON object (or as a structured CloudEvent with Accept:
//     application/cloudevents+json or &format=ce). &durable=ID makes it a
//     durable subscription: each event's id: is its checkpoint token, a
//     reconnection with Last-Event-ID resumes exactly after it, and
//     released ticks arrive as "event: gap". POST /v1/ack confirms a
//     token for &ack=client streams.
//   - GET /v1/status is the router's state for the dashboard (links,
//     reachable routers, counters, subscriptions, durable positions), and
//     GET / is the dashboard itself: one embedded page of plain
//     JavaScript and SVG.
//
// # Structure
//
// The gateway is a client of its router: it dials the router's own QUIC
// listener with the client library (router/client), so that publishing,
// acknowledgements, slow-consumer handling, mesh-wide subscription
// readiness and durable sessions are exactly those of every other client,
// and the router's matching loop has no HTTP-specific input. Plain SSE
// subscribers share a small pool of connections (one subscription each;
// deliveries are dispatched by subscription id from the connection's
// reader); each durable SSE subscriber owns a durable subscription
// session, as durable subscriptions always do.
//
// # Promises
//
// A publish request is all or nothing at the gateway: every event is
// decoded and checked (syntax, attribute names and values, permissions)
// before the first is handed to the router; a bad event is a 400 naming
// its line and attribute. An SSE subscriber that cannot keep up (its
// buffer of undelivered events, Config.SubscriberBuffer, overflows) is
// disconnected, never stalling the router or the other subscribers; a
// plain subscriber then reconnects and misses what was dropped, a durable
// one resumes with Last-Event-ID and misses nothing.
//
// # Caveats
//
// By default (&ack=auto) the gateway acknowledges a durable subscriber's
// position to its SHB once the event was written and flushed to the HTTP
// connection, since a browser's EventSource cannot confirm what it
// processed: a client that reconnects with an older Last-Event-ID than
// what was flushed (data lost in flight) finds those ticks delivered again
// if they are not yet released, and reported as a gap if they are, never
// silently skipped. &ack=client acknowledges only what the client
// presents (Last-Event-ID on reconnection, POST /v1/ack), for clients that
// confirm what they stored.
package httpapi
