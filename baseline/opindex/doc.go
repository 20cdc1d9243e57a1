// Package opindex is OpIndex (Zhang, Chan and Tan, "An efficient
// publish/subscribe index for e-commerce databases", PVLDB 2014),
// registered as the index "opindex".
//
// # What the paper specifies
//
// OpIndex partitions subscriptions in two levels. The first level gives
// every subscription one pivot attribute, one of the attributes it
// constrains, chosen to be rare in events, and files the subscription
// under it; an event only visits the partitions of the attributes it
// carries, since a subscription whose pivot is absent cannot match. The
// second level splits each partition by operator and attribute, each
// group with an index suited to its operator. Matching counts, per
// subscription of the visited partitions, the predicates the event
// satisfies; a subscription matches when the count equals its number of
// predicates. The paper supports insertion and deletion, and extends the
// operator groups to prefix, suffix and pattern predicates.
//
// # What it leaves open, and the choices made here
//
//   - The pivot: the paper picks the attribute least frequent in events,
//     from statistics the index does not have here. The proxy is the
//     subscription's attribute constrained by the fewest subscriptions so
//     far (for a bulk load, counted over the whole load first); ties go to
//     the first name. The pivot is remembered per subscription, so a
//     delete finds its partition whatever the counts are then.
//   - The operator groups: as in the paper, whose pruning comes from the
//     pivot level, each (attribute, operator) group is a list whose
//     predicates are evaluated one by one against the event value, and
//     each satisfied one counts for its subscription at once (no
//     intermediate list). Numeric constants that are exactly a float64
//     (every float, every int of at most 53 bits) are stored as float64 in
//     a dense list, compared with one float comparison; an int constant
//     beyond 2^53, and any comparison with an event int beyond 2^53, uses
//     the exact keys of package num. Strings and bools are tested with the
//     constraint's own test. Every operator and type of Sift's filter
//     language is supported: prefix, suffix and contains are the paper's
//     string extensions, and exists holds whenever the attribute is
//     present. This, not the partitioning, is what costs OpIndex on the
//     HEM workload, where every event carries every attribute: package
//     counting finds the satisfied predicates in sorted lists instead.
//   - A range `a >= L && a <= H` counts as two predicates, as in the
//     paper (one per operator group), not as one interval.
//   - Counters count down: each event starts from a copy of every
//     subscription's number of predicates, and a subscription matches
//     when its counter reaches zero, so a satisfied predicate touches one
//     counter, not a counter and its target.
package opindex
