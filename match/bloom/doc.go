// Package bloom owns the Bloom encoding of subscriptions and events for
// Bloom forwarding: the terms a filter is keyed by, the parameters routers
// agree on, subscription filters, the reference-counted constraint
// dictionary, the summary builder that the first router runs on each
// event, the Tree interface that bftree and sbstree implement, and Index,
// which turns a Tree into an exact match.Index. It imports match; match
// does not import it.
//
// # Basics
//
// A filter is cut into terms (Params.Terms): each equality constraint is a
// term, and each other constraint c becomes `E && c`, where E is the
// conjunction of the filter's equalities (with Flat parameters, every
// constraint is a term on its own). A term's key is a 64-bit hash of its
// canonical text; a key sets K of the M bits, by the hash family named by
// HashFamily with the network's seed. A subscription's Bloom filter is the
// union of its terms' bits. The dictionary holds every term of every
// subscription in the network, reference-counted; an event's summary is
// the union of the bits of every dictionary term the event satisfies, each
// evaluated exactly by the first router. Inner routers forward on the
// summary alone: subscription S is a candidate when E AND S == S.
//
// Ranges, prefixes, suffixes, substrings and != need no special encoding:
// the dictionary holds them exactly, and the first router decides them on
// the real event value. Satisfied bounds come in runs (a satisfied `< v`
// implies every `< w` with w > v), so the builder keeps each operator's
// terms sorted by value with stored unions, and a summary costs a few
// binary searches per attribute (a hash lookup for long == and != runs),
// not one test per term.
//
// Qualifying non-equality terms by the filter's equalities keeps the
// summary sparse: `symbol == "IBM" && price < 10` contributes its price
// bits only to events about IBM, where flat keys would put in every
// satisfied price bound of every symbol and saturate the summary.
//
// # No false negatives
//
// Claim: if S matches event e exactly, and every term of S is in the
// dictionary D at the router that builds e's summary, then the summary
// contains S's Bloom filter, so every router that tests S forwards e.
//
// Proof: each term t of S is implied by S (its constraints are
// constraints of S), so t holds on e. The builder evaluates every term of
// D exactly on e (TestSummaryMatchesBruteForce checks it against a
// term-by-term evaluation), so it sets all of t's bits. S's filter is the
// union of its terms' bits, so S ⊆ summary. Hash collisions only add bits
// (two terms with one key, or overlapping positions): they make extra
// candidates, never fewer. The empty filter has no bits and is always a
// candidate. Conversely, the conjunction of S's terms is equivalent to S
// (TestTermsAreEquivalentToFilter), so the encoding adds no false
// positives beyond hashing.
//
// The premise is the network's job, and covering breaks it if terms
// travel with subscriptions: a middle router that holds S1 from A
// covering S2 from B forwards only S1 upstream, so the first router would
// never learn S2's terms, the summary would lack S2's bits, and the middle
// router's Bloom test for B would reject an event S2 matches. Therefore
// dictionary terms propagate to every router regardless of covering
// (Dictionary.AddFilter and RemoveFilter are reference-counted so that the
// propagation is a cheap flood of term additions and removals, and Terms
// is the snapshot to send when a link comes up), a subscription's terms
// must be installed everywhere before its installation is acknowledged,
// and routers compare Params (Params.Compatible) when they link. The test
// TestCoveringTrap runs the scenario on three routing tables in a chain.
//
// # Caveats
//
// A summary is only useful while it is sparse. When many satisfied terms
// are distinct (HEM-like workloads: many independent ranges per event,
// no equalities to qualify them), the summary saturates: Stats counts
// summaries above SaturationThreshold, and routers should fall back to
// exact matching for those events. Dictionary and Index are not safe for
// concurrent use; Dictionary.Summary re-indexes attributes whose terms
// changed, so the first summary after a change pays a rebuild.
package bloom
