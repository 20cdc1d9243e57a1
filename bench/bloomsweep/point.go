package bloomsweep

import (
	"fmt"
	"math/rand/v2"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/router/bloomfwd"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Links of a point's routers: the downstream link holds the filters; an
// inner router's events come on the upstream one.
const (
	downLink mesh.Link = 1
	upLink   mesh.Link = 2
)

// batchEvents is the events per Publish or BloomPublish frame timed.
const batchEvents = 64

// router is the state one router of the chain holds in both modes: the
// exact index over the link's filters (and, at the last router, the
// subscribers'), the dictionary and the link's tree.
type router struct {
	params bloom.Params
	fast   *match.Fast
	dict   *bloomfwd.Dict
	trees  *bloomfwd.Trees
	dec    wire.EventDecoder
	ids    []match.ID
	// witnesses are the filters innerWitness checks, one per event of
	// its bodies in order; wpos is the next one (timeRole visits the
	// bodies in order, from the first).
	witnesses []match.Filter
	// byWitness finds those filters by witness (wire.FilterHash), as the
	// link table's holders do, for innerBloomWitness's exact entries.
	byWitness map[uint64]match.Filter
	wpos      int
	to        []mesh.Link
	sink      []byte
}

// newRouter builds the state for w: every filter in the exact index and
// in the downstream link's tree, and every `ai == v` in the dictionary.
func newRouter(w *pointWorkload, index string) (*router, error) {
	cfg := bloomfwd.Config{Index: index}
	dict, err := bloomfwd.NewDict(cfg)
	if err != nil {
		return nil, err
	}
	trees, err := bloomfwd.NewTrees(cfg)
	if err != nil {
		return nil, err
	}
	rt := &router{params: bloom.Params{}.Resolved(), fast: match.NewFast(match.FastConfig{}), dict: dict, trees: trees}
	texts := make([]string, len(w.filters))
	for i, f := range w.filters {
		if err := rt.fast.Insert(match.ID(i+1), f); err != nil {
			return nil, fmt.Errorf("exact index: %w", err)
		}
		texts[i] = f.String()
	}
	for i := range w.terms {
		for v := range w.values {
			dict.AddFilter(match.MustFilter(eq(i, v)))
		}
	}
	trees.LinkUp(downLink)
	if err := trees.Routes(downLink, &wire.Routes{Gen: 1, Seq: 1, Snapshot: true, Add: texts}); err != nil {
		return nil, fmt.Errorf("bloom trees: %w", err)
	}
	return rt, nil
}

// decisions is what each mode does with each event, computed once before
// timing, and the figures that follow from it: exact says a filter of the
// link matches the event (what the first router forwards, in both
// modes), bloom that an inner router forwards it on its summary.
type decisions struct {
	exact, bloom      []bool
	entries           [][]byte
	witnesses         []match.Filter // per event a filter matches, in order: the first it matches
	witnessHashes     []uint64       // their wire.FilterHash, which Bloom entries carry
	saturated         int
	fill, probeHits   float64
	probes            int
	exactBytes, bytes int
}

// decide routes every event in both modes, checks that Bloom forwarding
// forwards every event a filter matches, and probes the summaries with
// one-unmet filters.
func (rt *router) decide(r *rand.Rand, w *pointWorkload, probes int) (decisions, error) {
	var d decisions
	for i, e := range w.events {
		rt.ids = rt.fast.Match(e, rt.ids[:0])
		exact := len(rt.ids) > 0
		if exact {
			f := w.filters[rt.ids[0]-1]
			d.witnesses, d.witnessHashes = append(d.witnesses, f), append(d.witnessHashes, wire.FilterHash(f.String()))
		}
		sum := rt.dict.Summarize(e)
		d.fill += sum.Fill
		fwd := exact
		if sum.Exact {
			d.saturated++
		} else {
			rt.to, _ = rt.trees.Route(sum.Words, 0, rt.to[:0])
			fwd = len(rt.to) > 0
			for range probes {
				bits := rt.params.Encode(w.probe(r, i))
				if bloom.ContainsWords(sum.Words, bits.Words()) {
					d.probeHits++
				}
				d.probes++
			}
		}
		if exact && !fwd {
			return d, fmt.Errorf("bloom forwarding dropped event %d, which a filter matches (a false negative)", i)
		}
		entry := wire.AppendBloomEvent(nil, sum.Exact, sum.Words, w.raw[i])
		d.exact, d.bloom, d.entries = append(d.exact, exact), append(d.bloom, fwd), append(d.entries, entry)
		if exact {
			d.exactBytes += len(w.raw[i])
			d.bytes += len(entry)
		}
	}
	d.fill /= float64(len(w.events))
	return d, nil
}

// publishBodies encodes the events (of the ones keep selects) as Publish
// bodies of batchEvents each.
func publishBodies(w *pointWorkload, keep []bool) [][]byte {
	var bodies [][]byte
	var batch []match.Event
	for i, e := range w.events {
		if keep != nil && !keep[i] {
			continue
		}
		batch = append(batch, e)
		if len(batch) == batchEvents || i == len(w.events)-1 {
			bodies = append(bodies, (&wire.Publish{Seq: 1, Events: batch}).AppendBody(nil))
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		bodies = append(bodies, (&wire.Publish{Seq: 1, Events: batch}).AppendBody(nil))
	}
	return bodies
}

// bloomBodies encodes the entries the first router sends downstream in
// Bloom mode (those of the events a filter matches) as BloomPublish bodies
// of batchEvents each; with witnessed, each entry carries its witness, as
// on a link of wire.VersionBloomWitness.
func bloomBodies(d decisions, witnessed bool) [][]byte {
	var bodies [][]byte
	var batch wire.BloomBatch
	flush := func() {
		if batch.Len() > 0 {
			_, body, _, _ := wire.SplitFrame(batch.AppendFrame(nil, 1), wire.HardMaxFrame) // our own frame
			bodies = append(bodies, body)
		}
		batch.Reset()
	}
	j := 0 // the next witness: one per event a filter matches
	for i, e := range d.entries {
		if !d.exact[i] {
			continue
		}
		var w uint64
		if witnessed {
			w = d.witnessHashes[j]
		}
		j++
		if batch.AddEntry(e, w); batch.Len() == batchEvents {
			flush()
		}
	}
	flush()
	return bodies
}
