// Package core is the router's core: a deterministic state machine that
// takes typed inputs and returns its effects as data, in the shape of
// etcd raft's RawNode. It has no goroutines, reads no clock and does no
// I/O: package router is the shell that reads connections, steps the
// core from its one matching goroutine, and carries out what the core
// returns.
//
// # Driving the core
//
// A driver (router's matching loop, or the interaction harness in this
// package's tests) repeats:
//
//	c.Tick(now)              // the time, before an input that may arm a deadline
//	err := c.Step(input)     // one typed input; an error changes nothing
//	for c.HasReady() {
//		rd := c.Ready()      // the effects, taken out of the core
//		carry(rd)            // in the order Ready's fields give
//		c.Advance()
//	}
//	arm a timer for c.Deadline() and call c.Tick when it fires
//
// Time is an input. Tick(now) sets the core's clock (it never moves
// backwards) and fires the deadlines due at now; deadlines the core arms
// are measured from the clock of the latest Tick, so a driver ticks the
// core with the current time before stepping an input that may arm one.
// Deadline reports the earliest deadline pending, for the driver's timer.
//
// Carrying out a Ready may make the driver step the core again before
// Advance (a frame that does not fit a connection's send queue closes it,
// and the driver steps Detach): Ready hands the effects over, so the
// nested step's effects form a new Ready, which the driver carries out
// and Advances at once, before going on with the first, as it would have
// happened inside the original input.
//
// # What the core owns
//
// Behind Step, Tick and Ready the core owns, so far:
//
//   - clients and their subscriptions (clients.go, batch.go): the
//     engine's interfaces and subscriptions (Attach, Subscribe,
//     SubscribeBatch, Unsubscribe, Detach), answered with Replies or,
//     when the mesh places a subscription, with the Ack its Ready becomes;
//
//   - the mesh glue (links.go, advert.go): which connection carries which
//     mesh link (LinkUp, LinkFrame, Detach), subscriptions and
//     advertisements as the mesh sees them, mesh outputs turned into
//     frames (link messages, client Acks) and Close effects for the links
//     it refuses or the mesh closes, and the link table that mirrors the
//     routes each link sent (exact forwarding);
//
//   - Bloom forwarding's control side (bloom.go): the dictionary flood
//     and the trees over the filters each link forwarded, with the
//     ordering rule of router/bloomfwd (dictionary messages before the
//     mesh's messages of the same input, a new link's dictionary snapshot
//     after its hello and before the mesh's snapshot) kept in one place;
//
//   - client-assisted placement of subscriptions in the mesh routing
//     table (RTO and FF, assist.go): the assisting clients, FF claims, the
//     placement in progress, its queries and answers and its round
//     deadline;
//
//   - the event path (publish.go, bloom_publish.go): a client's or a
//     link's batch (Publish, BloomPublish) routed to local clients by the
//     engine and to links by the link table (its witnesses and cache) or,
//     in Bloom mode, on the summary; advertisements' conformance check.
//     Ready hands the driver Deliveries and Forwards that point into the
//     batch and into the Ready's own arena, so no event is copied.
//
// The shell keeps what is I/O: connections, send queues and their
// writers (a Deliver frame is encoded by the shell from a Delivery), the
// set of attribute names its readers decode with (grown by Ready's
// Wanted), HTTP and metrics.
//
// # Adding an input
//
// Every input is a struct type in input.go, with a comment saying who
// sends it and what the core does with it, and an input() method that
// marks it as an Input. Step switches on the type and calls one handler,
// in the file that owns the concept (assist.go for RTO/FF). A handler
// validates first and returns an error without changing state on bad
// input; it reports what it did only by appending to the pending Ready
// (never by calling out). A new kind of effect is a new Ready field whose
// comment says where it comes in the driver's order and why; the driver
// (router) carries it in that order. Inputs from a connection carry its
// ConnID; inputs that need the time read the clock of the latest Tick.
// Each new input gets its interaction scripts (testdata/) in the same
// commit.
//
// # Caveats
//
// The core is not safe for concurrent use: one goroutine drives it.
// Frames in Ready are encoded (wire.AppendFrame) and are the driver's to
// queue; the core keeps no reference to them.
package core
