// Package scribe owns Sift's topic-based, infrastructure-free overlay: Pastry
// prefix routing and Scribe multicast trees built on it, written as pure,
// deterministic state machines.
//
// # Basics
//
// A [Node] is one peer. It is driven only by its inputs: [Node.Step] takes a
// message that arrived at a given time, [Node.Tick] takes the current time, and
// the application calls ([Node.Create], [Node.Join], [Node.Leave],
// [Node.Publish], [Node.JoinNetwork]) are inputs too. Every effect is returned
// in an [Outbox]: messages to send and multicast deliveries. A Node has no
// goroutines, reads no clock and draws no random numbers; proximity (the
// network delay Pastry uses to choose table entries) is supplied by the caller
// through a [Proximity]. Given the same inputs in the same order a Node
// produces the same outputs, which is what lets the simulator in
// scribe/sim replay any run from its seed.
//
// Pastry: ids are [ID] values of a configurable width (see [Space]) read as
// digits of base 2^b. A node keeps a routing table indexed by shared prefix
// length, a leaf set of the |L| numerically closest nodes and a neighbourhood
// set of the |M| closest by proximity. Routing applies the leaf-set rule, then
// the prefix rule, then the rare case: among live known nodes sharing at least
// as long a prefix with the key and numerically closer than this node, the one
// numerically closest to the key. Nodes join message by message
// ([Node.JoinNetwork]) and repair their leaf sets and tables when a peer is
// found dead. Simulators of static networks may instead fill tables from
// global knowledge with [Node.Learn].
//
// Scribe: a group's id is SHA-1(name + creator) truncated to the id width
// ([GroupID]); its root is the live node numerically closest to it. JOIN
// messages follow Pastry routes; each hop adopts the previous hop as a child
// and a JOIN stops at the first node already on the tree. LEAVE prunes upward
// until a node still has children or is a member. The root multicasts down
// the tree; sources cache the root's address. Parents send heartbeats that
// carry their path from the root (for loop detection); children that miss
// them rejoin through Pastry, which also moves a dead root's role to the next
// numerically closest node. Root state is replicated on the k closest nodes.
// Optionally, a bottleneck remover caps the children entries of a node, and
// non-member forwarders with a single child can be collapsed.
//
// # Caveats
//
// Delivery is best effort, as in the paper: messages multicast while a tree is
// broken are not recovered (the paper's sequence-number sketch is not
// implemented). Children tables are hard state here: a child is removed when
// it leaves, is redirected, or is found dead when a message to it bounces.
// A node that has been declared dead is never readmitted.
package scribe
