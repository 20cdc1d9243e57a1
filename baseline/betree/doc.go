// Package betree is BE-Tree (Sadoghi and Jacobsen, "BE-Tree: an index
// structure to efficiently match Boolean expressions over
// high-dimensional discrete space", SIGMOD 2011), registered as the index
// "betree".
//
// # What the paper specifies
//
// BE-Tree cuts the space of subscriptions in two alternating ways. A
// cluster node (c-node) holds a leaf list (l-node) of subscriptions and a
// partition directory: for some attributes, a partition node (p-node).
// Each p-node holds a clustering directory over its attribute's value
// space, a binary tree of buckets (each bucket half of its parent), and
// every bucket holds a c-node of its own. A subscription is stored at the
// deepest point it can descend to: from a c-node, into the p-node of an
// attribute it constrains, then into the smallest bucket that contains
// its whole predicate on that attribute, and so on; where it can descend
// no further it sits in the l-node. When an l-node overflows its
// capacity, BE-Tree first splits the bucket (space clustering: the two
// halves take the subscriptions that fit in them) and then partitions
// the c-node on a new attribute (space partitioning: a p-node for the
// attribute most of the overflowing subscriptions constrain, never one
// already used on the path from the root). Matching an event checks each
// visited l-node's subscriptions in full and, for each event attribute
// with a p-node, descends into every bucket containing the event's value.
// Insertion and deletion are supported.
//
// # What it leaves open, and the choices made here
//
//   - Operators and types: any constraint can sit in an l-node, where the
//     whole filter is evaluated, so every operator and type of Sift's
//     filter language is supported. Only numeric ==, <, <=, >, >= (folded
//     per attribute into one interval) guide the descent; the other
//     constraints of a subscription are only checked at its l-node.
//   - The domain: Config.Lo and Config.Hi (default [0, 10^6)) are the root
//     bucket's split range; the first and last buckets of every level
//     extend to minus and plus infinity, and bucket containment is
//     decided by exact comparison, so values outside the domain stay
//     exact.
//   - The paper's cost-based scores for choosing an attribute and its
//     bucket-size parameters are replaced by the simplest rules that keep
//     its shape: the partitioning attribute is the one constrained by the
//     most subscriptions of the overflowing l-node (ties by name), the
//     leaf capacity is Config.Capacity (default 20) and buckets split down
//     to Config.MaxDepth levels (default 20).
//   - Deletion removes the subscription from its l-node and leaves the
//     emptied directories in place (the paper does not say when it
//     merges them back).
package betree
