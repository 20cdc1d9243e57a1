// Package betree is BE-Tree (Sadoghi and Jacobsen, "BE-Tree: an index
// structure to efficiently match Boolean expressions over
// high-dimensional discrete space", SIGMOD 2011), registered as the index
// "betree".
//
// # What the paper specifies
//
// BE-Tree cuts the space of subscriptions in two alternating ways. A
// cluster node (c-node) holds a leaf list (l-node) of subscriptions and a
// partition directory of partition nodes (p-nodes), each on one
// attribute. A p-node holds a clustering directory over its attribute's
// value space: a binary tree of buckets, each half of its parent, each
// with a c-node of its own.
//
// Insertion descends from the root c-node: among the p-nodes of the
// attributes the subscription constrains, it takes the best-ranked one,
// goes down its clustering directory to the smallest bucket that encloses
// the subscription's whole predicate on that attribute, and continues
// from that bucket's c-node; where no p-node applies, the subscription
// joins the l-node. An l-node overflows beyond its maximum capacity A. An
// overflow at the root is relieved by space partitioning: while the
// l-node overflows, open a p-node on the best-ranked attribute of its
// subscriptions not used on the path from the root, move every
// subscription constraining it into that p-node's clustering directory,
// and cluster it. An overflow in a clustering directory is relieved by
// space clustering: a leaf bucket that is not atomic splits in halves,
// each taking the subscriptions it encloses (clustered in turn); what
// still overflows is partitioned. When nothing relieves an l-node, its
// capacity grows, so the next attempt waits for more subscriptions.
// Matching evaluates every visited l-node's subscriptions in full and,
// from each visited c-node, follows every p-node whose attribute the
// event carries down the buckets containing the event's value. The paper
// ranks attributes and p-nodes by a score it leaves pluggable, with a
// cost-based one (the expected matching work a partition spares) as its
// own choice. Insertion and deletion are supported.
//
// # What it leaves open, and the choices made here
//
//   - The cost model: a subscription kept in an l-node is evaluated for
//     every event reaching it; under a p-node on attribute a, only for
//     events whose value falls in the bucket that will enclose its range
//     once the directory is split as deep as MaxDepth allows, a share of
//     events equal to that bucket's share of the domain [Lo, Hi) when
//     values are spread evenly. A subscription's gain on a is 1 minus that
//     share. Space partitioning opens the p-node on the attribute with the
//     largest summed gain over the overflowing l-node (ties by name), and
//     only if that sum exceeds one evaluation per event, the least a
//     p-node's own visit costs; insertion descends into the p-node where
//     the subscription's own gain is largest (ties to the p-node holding
//     more subscriptions, then the older). Event statistics are not
//     collected: events without the attribute, which also skip the
//     p-node, are not counted, so gains are lower bounds.
//   - Operators and types: any constraint can sit in an l-node, where the
//     whole filter is evaluated, so every operator and type of Sift's
//     filter language is supported. Only numeric ==, <, <=, >, >= (folded
//     per attribute into one interval) guide the descent and the cost
//     model; the other constraints are only checked at the l-node.
//   - The domain: Config.Lo and Config.Hi (default [0, 10^6)) are the root
//     bucket's range for every attribute; the first and last buckets of
//     every level extend to minus and plus infinity, and enclosure is
//     decided by exact comparison, so values outside the domain stay
//     exact. A bucket at depth Config.MaxDepth (default 20) is atomic.
//   - Capacity: Config.Capacity is A (default 20); an l-node nothing
//     relieves gets the capacity of the next multiple of A above its size.
//     A bucket split that would move no subscription (every range
//     straddles the middle) is not made.
//   - Deletion removes the subscription from its l-node, then trims: a
//     split bucket whose halves hold nothing loses them, and a p-node
//     whose directory holds nothing leaves its partition directory, up
//     the tree while that leaves the parent empty.
package betree
