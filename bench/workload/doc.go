// Package workload is Sift's one generator of benchmark workloads: seeded,
// deterministic sets of subscriptions (match.Filter) and events
// (match.Event) that every structure and every harness share.
//
// # Workloads
//
//   - HEM is the standard synthetic workload of the REIN/TAMA/HEM line of
//     work: integer attributes, subscriptions made of range predicates
//     `a >= L && a <= H`, events that give a value to (by default) every
//     attribute, with optional Zipf skew of attributes and of values.
//   - Stock is a realistic market-data workload: ticker symbols with Zipf
//     popularity, float prices around a per-symbol base, int volumes,
//     venues, sides, sectors and bool flags; subscriptions mix equality,
//     nested price ranges, prefixes and `!=`, and match a realistic share
//     (about 0.1-1%) of subscriptions per event.
//   - Nested is a covering-heavy trade workload for covering-based routing
//     tables: a few broad filters (`symbol == X`, wide symbol-less price
//     bands) cover many narrow ones, and narrow per-symbol price bands of
//     log-uniform width nest inside each other.
//
// # Promises
//
// The same configuration and seed always give the same filters and events,
// on every platform and Go version (the generators use math/rand/v2's PCG
// with explicit streams, never a global source). Subscriptions and events
// come from separate streams, so changing the number of events does not
// change the subscriptions, and the first n subscriptions of a larger
// workload are exactly the subscriptions of the same workload with n
// subscriptions (so sweeps over the subscription count nest).
//
// # Caveats
//
// Generation is not free: a million HEM subscriptions take a few seconds
// and the Zipf tables hold one float64 per value of the domain when value
// skew is on.
package workload

import "github.com/sift-pubsub/sift/match"

// Workload is a generated set of subscriptions and events. Subscription i
// has id i in every index built from it.
type Workload struct {
	// Filters are the subscriptions, in generation order.
	Filters []match.Filter
	// Events are the events to match, in generation order.
	Events []match.Event
}

// Stream numbers of the PCG generators derived from one seed. Keeping them
// apart makes subscriptions independent of the number of events.
const (
	streamUniverse uint64 = iota + 1
	streamFilters
	streamEvents
)
