// Package match owns Sift's data model and everything that decides whether
// an event matches a subscription: values, events, constraints and filters
// with their exact semantics, the filter language (parser and canonical
// printer), JSON event decoding, covering, overlap and merging of filters,
// and matching indexes behind one Index interface (the brute-force Scan
// reference and the fast backward bitset index).
//
// # Semantics
//
// An event is a flat set of attributes, each a name and a typed value
// (string, int64, float64 or bool). A constraint `attr op value` holds only
// when the event has the attribute and its value is comparable with the
// constraint's value: int64 and float64 compare with each other by exact
// mathematical value (an int64 above 2^53 is never rounded to a float64),
// strings compare bytewise, and false < true. A constraint whose value is not
// comparable with the event's value is false for every operator, `!=`
// included. `prefix`, `suffix` and `contains` apply to strings only, and
// `exists` holds whenever the attribute is present. A filter is a
// conjunction of constraints; several may name the same attribute. NaN and
// infinities are rejected everywhere.
//
// # Promises
//
// Covers(a, b) is sound: it never reports covering that does not hold. It is
// complete for numeric and boolean constraints (intervals, equality and `!=`,
// all combined per attribute; a numeric range counts only the int64 and
// float64 values events can carry, so one that holds none is empty), for string intervals built from `==`, `<`,
// `<=`, `>`, `>=` and `prefix`, and for `exists`. It may miss covering that
// depends on `suffix` or `contains` reasoning beyond the literal rules (a
// longer suffix implies a shorter one, a guaranteed prefix or suffix implies
// contained substrings), and on string intervals so narrow that they hold
// finitely many strings. Overlaps(a, b) is false only when the two filters
// provably match no common event. Merge returns a filter that covers both
// inputs and says whether it matches exactly their union.
//
// Every Index returns exactly the subscriptions whose filter matches, as
// Scan does; the tests check every registered index against Scan.
package match
