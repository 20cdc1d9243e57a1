package bloomsweep

import (
	"context"
	"fmt"
	"time"

	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/internal/wire"
)

// A role is one router's work on a list of frame bodies; it returns the
// events it handled.
type role func(bodies [][]byte) (int, error)

// firstExact is the first router in exact mode: decode the client's
// batch, match every event against the link's filters (a match forwards
// the raw bytes as they are).
func (rt *router) firstExact(bodies [][]byte) (int, error) {
	n := 0
	for _, b := range bodies {
		p, err := rt.dec.DecodeOwnedPublish(b)
		if err != nil {
			return n, err
		}
		for _, e := range p.Events {
			rt.ids = rt.fast.Match(e, rt.ids[:0])
		}
		n += len(p.Events)
	}
	return n, nil
}

// firstBloom is the first router in Bloom mode: decode, match every
// event exactly against the link's filters as in exact mode (no false
// positive leaves the first router), and summarize and build the
// BloomPublish entry of each event forwarded.
func (rt *router) firstBloom(bodies [][]byte) (int, error) {
	n := 0
	for _, b := range bodies {
		p, err := rt.dec.DecodeOwnedPublish(b)
		if err != nil {
			return n, err
		}
		for i, e := range p.Events {
			if rt.ids = rt.fast.Match(e, rt.ids[:0]); len(rt.ids) == 0 {
				continue
			}
			sum := rt.dict.Summarize(e)
			rt.sink = wire.AppendBloomEvent(nil, sum.Exact, sum.Words, p.Raw[i])
		}
		n += len(p.Events)
	}
	return n, nil
}

// innerExact is an inner (or the last) router in exact mode when the
// witness that came with an event does not decide (a branch of the
// routing tree whose links do not all hold the witnessed filter): decode
// the link's batch and match every event against the index.
func (rt *router) innerExact(bodies [][]byte) (int, error) { return rt.firstExact(bodies) }

// innerWitness is an inner router in exact mode inside a chain: every
// event comes with the witness of a filter the router before found it to
// match, which the next link holds too, so the router decodes the event
// and checks that one filter (router/linktable.go) instead of matching.
func (rt *router) innerWitness(bodies [][]byte) (int, error) {
	n := 0
	for _, b := range bodies {
		p, err := rt.dec.DecodeOwnedPublish(b)
		if err != nil {
			return n, err
		}
		for _, e := range p.Events {
			if !rt.witnesses[rt.wpos].Matches(e) {
				return n, fmt.Errorf("event %d does not match its witness", rt.wpos)
			}
			rt.wpos = (rt.wpos + 1) % len(rt.witnesses)
			n++
		}
	}
	return n, nil
}

// innerBloom is an inner router in Bloom mode: read the entries and walk
// the tree on each summary, never decoding an event unless it is marked
// exact (then decode and match it).
func (rt *router) innerBloom(bodies [][]byte) (int, error) {
	n := 0
	for _, b := range bodies {
		m, err := wire.Decode(wire.TypeBloomPublish, b)
		if err != nil {
			return n, err
		}
		for _, be := range m.(*wire.BloomPublish).Events {
			if be.Exact {
				e, err := rt.dec.DecodeEvent(be.Event)
				if err != nil {
					return n, err
				}
				rt.ids = rt.fast.Match(e, rt.ids[:0])
				continue
			}
			if rt.to, err = rt.trees.Route(be.Summary, upLink, rt.to[:0]); err != nil {
				return n, err
			}
		}
		n += len(m.(*wire.BloomPublish).Events)
	}
	return n, nil
}

// innerBloomWitness is innerBloom for entries that carry their witness,
// as on a link of wire.VersionBloomWitness (the hash of the filter the
// first router matched, which the link in front holds too): the router
// checks that filter against the summary (bloomfwd.Trees.RouteWitness)
// and walks the tree only when it fails, as the routers do; an entry
// marked exact is decoded and checked against the witnessed filter (the
// link table's witness path), matched against the index only when that
// fails.
func (rt *router) innerBloomWitness(bodies [][]byte) (int, error) {
	n := 0
	for _, b := range bodies {
		m, err := wire.Decode(wire.TypeBloomPublish, b)
		if err != nil {
			return n, err
		}
		for i, be := range m.(*wire.BloomPublish).Events {
			if be.Witness == 0 {
				return n, fmt.Errorf("entry %d of a body: no witness", i)
			}
			if be.Exact { // decoded and checked against the witnessed filter, as the link table does
				e, err := rt.dec.DecodeEvent(be.Event)
				if err != nil {
					return n, err
				}
				if f, ok := rt.byWitness[be.Witness]; !ok || !f.Matches(e) {
					rt.ids = rt.fast.Match(e, rt.ids[:0])
				}
				continue
			}
			if rt.to, _, err = rt.trees.RouteWitness(be.Summary, upLink, be.Witness, rt.to[:0]); err != nil {
				return n, err
			}
			if len(rt.to) == 0 {
				return n, fmt.Errorf("entry %d of a body: not forwarded, though its witness matches (a false negative)", i)
			}
		}
		n += len(m.(*wire.BloomPublish).Events)
	}
	return n, nil
}

// timeRole runs f over bodies, one body (batchEvents events) at a time,
// cycling, until it has used minCPU of this thread's CPU, and returns the
// CPU nanoseconds per event (0 when there is nothing to handle). Stopping
// between bodies bounds a slow point's timing to about minCPU, and an
// ended ctx stops it at the next body.
func timeRole(ctx context.Context, f role, bodies [][]byte, minCPU time.Duration) (float64, error) {
	if len(bodies) == 0 {
		return 0, nil
	}
	unlock := cpuclock.LockThread()
	defer unlock()
	start, events := cpuclock.Thread(), 0
	for i := 0; ; i = (i + 1) % len(bodies) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		n, err := f(bodies[i : i+1])
		if err != nil {
			return 0, fmt.Errorf("timing: %w", err)
		}
		events += n
		if used := cpuclock.Thread() - start; used >= minCPU || (i == len(bodies)-1 && events == 0) {
			if events == 0 {
				return 0, nil
			}
			return float64(used.Nanoseconds()) / float64(events), nil
		}
	}
}
