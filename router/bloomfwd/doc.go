// Package bloomfwd owns one router's side of Bloom forwarding
// (docs/protocol.md, "Bloom forwarding") as pure, deterministic
// state: the constraint dictionary and its flooding over the link tree,
// the per-link Bloom trees over the filters each neighbour forwarded, and
// the summary that the first router computes for each event. It does no
// I/O, starts no goroutine and reads no clock; it is not safe for
// concurrent use (the router's matching loop owns it, beside router/mesh).
//
// # Promises
//
//   - Dictionary (the flood): every dictionary term in use by a
//     subscription anywhere in a router's component reaches every router
//     of the component, whatever covering prunes. Each router tells each
//     link the set of terms in use on its side of the link (its local
//     clients' terms and the terms received on its other links), as
//     changes in one wire.BloomTerms per input and link, never back to the
//     link a term came from; a link that comes up gets a snapshot, and a
//     link that goes down takes its terms with it. Bad input (a term that
//     does not parse, an addition of a term already held from the link, a
//     removal of one not held) returns an error and changes nothing.
//   - Ordering (what makes a subscription's Ready imply its terms are
//     everywhere): the caller sends the messages AddFilter returns before
//     the mesh's Routes and barriers for the subscription, the messages
//     Receive returns before anything later received on any link, and the
//     LinkUp snapshot right after the link's hello, before the mesh's
//     snapshot. Links are FIFO, so every Routes or barrier of the
//     subscription travels behind its terms on every link, hop by hop, and
//     its acknowledgement comes back only once the terms are installed on
//     every router it crossed. TestReadyImpliesTerms checks this on random
//     meshes, and fails when the order is reversed.
//   - Trees: Route returns the links whose neighbour forwarded a filter
//     that the summary contains (E AND S == S), never the link the event
//     came from. With the dictionary above, no event that matches a
//     forwarded filter is missed (see match/bloom's "No false negatives");
//     extra links are false positives, which the next router counts.
//   - Summaries: Summarize marks an event exact when its summary is more
//     than bloom.SaturationThreshold full; routers then match it exactly.
//
// # Caveats
//
// The trees hold the filters as the neighbour sent them (after covering),
// parsed a second time beside router/mesh, which holds them too; Routes
// must be given only messages the mesh accepted.
package bloomfwd
