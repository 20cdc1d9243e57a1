// Package counting is forward counting, the matcher of Fabret et al.
// ("Filtering algorithms and implementation for very fast
// publish/subscribe systems", SIGMOD 2001) that the REIN, TAMA and HEM
// papers compare against, registered as the index "counting".
//
// # What the paper specifies
//
// Subscriptions are conjunctions of predicates (attribute, operator,
// value). Predicates are indexed per attribute and operator: a hash table
// for equality and sorted lists for the orderings, so that the predicates
// an event value satisfies are found without evaluating the others. A
// counter per subscription counts its satisfied predicates; a
// subscription matches when its counter reaches its number of
// predicates. (The paper's contribution beyond this baseline, clustering
// subscriptions by an access predicate, is not part of this package.)
//
// # What it leaves open, and the choices made here
//
//   - Which operators: every operator of Sift's filter language is
//     supported. != uses a sorted list minus the run of equal values;
//     prefix, suffix and contains, which no hash or order indexes, are
//     evaluated one by one per event (the paper's "non-indexable"
//     predicates); exists holds whenever the attribute is present.
//   - Shared predicates: the paper evaluates each distinct predicate once
//     and keeps the subscriptions containing it. Here equal predicates sit
//     next to each other in the sorted lists, which does the same number
//     of counter increments without a separate predicate table.
//   - Counters are reset by clearing the whole array per event (a memset
//     the size of the subscription count) rather than by remembering the
//     touched ones.
//   - Updates: the paper does not discuss them. Inserts append to the
//     lists, which are sorted again before the next match; deletes remove
//     the subscription's predicates in place.
//   - Types follow Sift's data model: a predicate holds only for a value
//     of a comparable type, ints and floats compared exactly.
package counting
