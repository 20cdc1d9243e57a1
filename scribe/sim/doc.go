// Package sim is a deterministic discrete-event simulator for the scribe
// package, and the experiments (reports) run on it.
//
// # Basics
//
// A [Sim] owns one [scribe.Node] per address and a [Network] that gives the
// delay between any two nodes: a plane (delay = Euclidean distance, see
// [NewPlane]) or a transit-stub router topology (delay = shortest-path delay
// through routers, and link-by-link paths for link stress, see
// [NewTransitStub]). Messages are events ordered by arrival time and then by
// the order they were sent, so a run depends only on its inputs: every
// random choice (positions, ids, topology, members) comes from one seeded
// *rand.Rand, and the same seed gives the same events, figures and report
// bytes. A message to a dead node comes back to its sender as
// [scribe.KindUndeliverable] after [Sim.BounceDelay], as a failed connection
// would.
//
// Routing state is built in one of two ways. [BuildByJoins] runs Pastry's
// join protocol message by message, node after node; the small-network tests
// and the failure report use it, together with repair after failures.
// [BuildStatic] fills every node's leaf set, routing table and neighbourhood
// set from global knowledge of a static network, as the Scribe paper's
// simulator effectively does; the 4,096-, 50,000- and 100,000-node reports
// use it. Scribe itself (create, join, leave, multicast, heartbeats,
// bottleneck remover, collapse) always runs message by message.
//
// # Caveats
//
// Messages take exactly the network delay: there is no queueing, loss or
// reordering beyond what different path delays cause. Experiments that
// build trees run joins one at a time to quiescence, as if they were spread
// out in time.
package sim
