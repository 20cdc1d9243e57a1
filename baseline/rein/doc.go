// Package rein is REIN (Qian, Cao, Zhu and Li, "REIN: a fast event
// matching approach for content-based publish/subscribe systems",
// INFOCOM 2014), registered as the index "rein".
//
// # What the paper specifies
//
// REIN is a backward matcher: rather than counting the predicates an
// event satisfies, it marks the subscriptions the event fails, and the
// unmarked ones match. Each subscription is a conjunction of interval
// predicates low <= a <= high. For each attribute the value domain is cut
// into c buckets of equal width; a predicate's low end is stored in the
// bucket of its value in the attribute's low-end array, and its high end
// in the high-end array, each bucket sorted by value. For an event value
// v in bucket b, every low end in the buckets above b fails (low > v),
// and in bucket b itself the low ends above v, found by comparison; the
// high ends are handled the same way below v. Every subscription with a
// predicate on an attribute the event does not give a value to fails.
// Marks go into a bitset over the subscriptions; its complement is the
// match set. Insertion and deletion place or remove a predicate's two
// ends in their buckets.
//
// # What it leaves open, and the choices made here
//
//   - Operators and types: REIN is defined for numeric intervals. The
//     constraints ==, <, <=, >, >= with int or float values are folded per
//     attribute into one interval, open or closed at each end, possibly
//     unbounded on one side (then that end is not stored); any other
//     constraint (!=, string operators, exists, string or bool values) is
//     refused with baseline.ErrUnsupported. An event value of another type
//     fails every predicate on its attribute, as an absent one does.
//   - The domain: the paper assumes values in a known [0, R). Config.Lo
//     and Config.Hi give it (default the HEM workload's [0, 10^6)); values
//     outside it go to the first or last bucket, which keeps the bucket
//     order monotone and the comparisons in the boundary bucket exact, so
//     results stay exact for every value, only slower when many values lie
//     outside.
//   - The number of buckets: the paper studies it and finds a broad
//     optimum; Config.Buckets (default 1000) sets it.
//   - Exactness: ints above 2^53 and int/float mixes are compared by
//     exact value (bucket choice uses the float64 nearest a value, which
//     is monotone; comparisons inside a bucket are exact).
//   - The "attribute absent" marking uses one bitset per attribute of the
//     subscriptions constraining it, ORed in word by word.
//   - Buckets are sorted lazily, when a match first needs to compare
//     inside them, so inserts and bulk loads only append.
package rein
