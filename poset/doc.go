// Package poset owns Sift's covering structures and the routing-table
// logic built on them: the SIENA filters poset (Poset), the poset-derived
// forest of Tarkoma and Kangasharju (Forest), a covering-candidate index for
// high subscription counts, the routing-table state machine with SIENA
// forwarding sets per neighbour (Table), routing-table offloading (RTO:
// Placement, Evaluate, policies) and fixed filters (FF: Pin, FixedCovering,
// AddFF). Poset and Forest are registered as match indexes "poset" and
// "forest" (`sift match --index poset|forest`).
//
// # The relation
//
// A poset is only well defined over a transitive relation, and a sound but
// incomplete covering test need not be transitive. Every structure here
// uses Covers, which restricts match.Covers so that it is transitive:
//
//   - the match-all filter covers every filter, and only it covers the
//     match-all filter (a non-empty filter fails the event with no
//     attributes, which the match-all filter matches);
//   - a filter covers any Equal filter;
//   - otherwise a covers b only if both lie in the complete fragment (no
//     suffix or contains constraint) and match.Covers(a, b).
//
// On the complete fragment match.Covers is sound and complete (numeric and
// bool constraints, string intervals from ==, <, <=, >, >= and prefix, !=
// and exists, per match's documentation), so it is set inclusion of match
// sets there, which is transitive. A chain through a filter outside the
// fragment only goes through Equal filters or the match-all filter, and
// both cases compose. Filters with suffix or contains constraints are
// therefore only related to equal filters and the match-all filter: they
// sit at the top of the structures and are forwarded on their own, a
// documented loss of covering, never of correctness. TestCoversTransitive
// checks transitivity and soundness with rapid, including strings with NUL
// bytes that make narrow intervals. Unsatisfiable filters
// (match.Satisfiable false) are kept aside: they never match and are never
// forwarded. Filters that cover each other are equivalent; a node holds one
// class of equivalent filters and all their subscriptions.
//
// # Promises
//
//   - Match returns exactly what match.Scan returns. This needs only the
//     soundness of every edge (a parent covers its children), so it holds
//     even after RTO or FF placements made from wrong answers that
//     verification accepted as sound.
//   - Poset: after every insert and delete the edges are exactly the
//     immediate covering relation (the Hasse diagram) over the nodes.
//   - Forest: every node has at most one parent, which covers it, and the
//     children of every node (and the roots) are pairwise incomparable.
//   - Table: the forwarding set of a neighbour N holds, per node with a
//     subscription from another interface and no such subscription at any
//     ancestor, one such filter; with the poset this is SIENA's minimal
//     set. An event reaches N exactly when a subscription from another
//     interface matches it, with or without merging.
//   - Every operation is deterministic; nothing here does I/O, starts
//     goroutines, reads a clock or uses global randomness.
//
// # Costs and caveats
//
// The classic algorithms (Config.Classic) test a new filter against every
// root and more. The candidate index groups nodes by attribute mask and
// keeps a numeric box per filter, so a covering query enumerates only the
// masks that can be subsets or supersets and tests only the boxes that can
// contain or be contained; covering tests then drop to the candidates. The
// poset indexes all its nodes, the forest its roots. Where most filters
// share one attribute set (the stock workloads), a query scans that group's
// boxes linearly: no covering tests, but linear CPU.
//
// RTO under Trust (and under Majority when every client asked lies the same
// way) can misplace a filter so that events are missed; Verify cannot: every
// edge it accepts is a covering, and a predecessor must not be equivalent to
// the new filter, so lies cannot chain equivalent filters into a cycle that
// no root leads to. FF
// in the poset links a filter only below the claimed fixed filters, so a
// covering filter outside their subtrees may lack its edge (the structure
// stays sound and Match exact). One RTO placement runs at a time per
// structure, and the structure must not change until it is done. An RTO
// placement in the poset sends the children of every node answered as
// covering the new filter (so it finds every predecessor), and searches
// the successors only below the first predecessor found (every successor
// lies below every predecessor). It leaves out of its vectors the children
// that a cheap test shows disjoint from the new filter (they can be neither
// above nor below it); nodes with many children index them by their first
// string equality (a flat child index), so whole groups of other values
// are skipped unread. What remains of the router's work is memory work per
// node looked at, and verification's few covering tests (see the issue-3
// note).
//
// A Table's neighbours can change (AddNeighbour, RemoveNeighbour): adding
// one costs the part of the structure not covered by other interfaces'
// subscriptions, and a neighbour that is not there costs nothing per
// subscription.
//
// Structures are not safe for concurrent use.
package poset
