package core

import "github.com/sift-pubsub/sift/match"

// RouteBatch routes the events of one batch from `from`, calling
// each(i, hits) with what Route would return for evs[i], in order (hits
// alias the engine's scratch space: valid during the call only). When the
// index matches a batch for less than one Match per event (a
// match.BatchMatcher: match.Parallel hands the whole batch to every core
// at once, instead of one handoff per event), the events are matched
// together first; otherwise, or for a single event, they are routed one
// by one.
//
// each may change the subscriptions (a slow consumer's connection is
// detached while its deliveries are queued): the events after such a
// change are matched again, one at a time, so that no event is routed to
// a subscription removed before it, as with Route event by event.
func (e *Engine) RouteBatch(from ifaceID, evs []match.Event, each func(i int, hits []Hit)) {
	if _, ok := e.idx.(match.BatchMatcher); !ok || len(evs) < 2 {
		for i, ev := range evs {
			each(i, e.Route(from, ev))
		}
		return
	}
	e.countRouted(len(evs)) // every event counts, as with Route
	v := e.version
	for i := range e.batch {
		e.batch[i] = e.batch[i][:0] // MatchBatch appends
	}
	e.batch = match.MatchBatch(e.idx, evs, e.batch)
	for i, ev := range evs {
		if e.version != v {
			e.matched = e.idx.Match(ev, e.matched[:0])
			each(i, e.routeMatched(from, e.matched))
			continue
		}
		each(i, e.routeMatched(from, e.batch[i]))
	}
}
