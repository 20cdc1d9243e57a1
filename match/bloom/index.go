package bloom

import (
	"fmt"

	"github.com/bits-and-blooms/bitset"
	"github.com/sift-pubsub/sift/match"
)

// Index is a match.Index over a Bloom Tree: it keeps the dictionary of its
// own subscriptions' terms (it plays the first router and the last one at
// once), summarises each event, asks the tree for candidates, and
// re-checks them with the exact filter. It also implements
// match.RawMatcher (the unchecked candidates) and match.StatsReporter.
type Index struct {
	name      string
	dict      *Dictionary
	tree      Tree
	subs      map[match.ID]subscription
	summary   *bitset.BitSet
	saturated bool // the last summary was saturated
	cands     []uint64
	stats     Stats
}

type subscription struct {
	f    match.Filter
	bits *bitset.BitSet
}

// NewIndex returns an empty index named name (for messages) over tree,
// which must be empty and built for the same p.M.
func NewIndex(name string, p Params, tree Tree) (*Index, error) {
	d, err := NewDictionary(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Index{
		name:    name,
		dict:    d,
		tree:    tree,
		subs:    make(map[match.ID]subscription),
		summary: d.p.NewFilter(),
	}, nil
}

// Insert adds a subscription.
func (x *Index) Insert(id match.ID, f match.Filter) error {
	if _, dup := x.subs[id]; dup {
		return fmt.Errorf("%s: subscription %d already present", x.name, id)
	}
	s := subscription{f: f, bits: x.dict.p.Encode(f)}
	x.tree.Insert(s.bits, uint64(id))
	x.dict.AddFilter(f)
	x.subs[id] = s
	return nil
}

// Delete removes a subscription.
func (x *Index) Delete(id match.ID) error {
	s, ok := x.subs[id]
	if !ok {
		return fmt.Errorf("%s: subscription %d not present", x.name, id)
	}
	if err := x.tree.Delete(s.bits, uint64(id)); err != nil {
		return fmt.Errorf("%s: delete %d: %w", x.name, id, err)
	}
	if err := x.dict.RemoveFilter(s.f); err != nil {
		x.tree.Insert(s.bits, uint64(id)) // undo: a failed delete changes nothing
		return fmt.Errorf("%s: delete %d: %w", x.name, id, err)
	}
	delete(x.subs, id)
	return nil
}

// Len returns the number of subscriptions.
func (x *Index) Len() int { return len(x.subs) }

// Match appends the ids of the subscriptions whose filter matches e: the
// Bloom candidates that pass the exact re-check.
func (x *Index) Match(e match.Event, dst []match.ID) []match.ID {
	exact := 0
	for _, c := range x.candidates(e) {
		if x.subs[match.ID(c)].f.Matches(e) {
			dst = append(dst, match.ID(c))
			exact++
		}
	}
	x.count(exact)
	return dst
}

// LastSaturated reports whether the summary of the last matched event
// was saturated (filled above SaturationThreshold).
func (x *Index) LastSaturated() bool { return x.saturated }

// MatchRaw appends the Bloom candidates for e without the exact re-check:
// a superset of Match. The candidates are still re-checked, only to count
// false positives in Stats.
func (x *Index) MatchRaw(e match.Event, dst []match.ID) []match.ID {
	exact := 0
	for _, c := range x.candidates(e) {
		dst = append(dst, match.ID(c))
		if x.subs[match.ID(c)].f.Matches(e) {
			exact++
		}
	}
	x.count(exact)
	return dst
}

// candidates summarises e and returns the tree's candidates (a buffer
// reused by the next call).
func (x *Index) candidates(e match.Event) []uint64 {
	x.dict.Summary(e, x.summary)
	fill := Fill(x.summary)
	x.stats.Events++
	x.stats.FillSum += fill
	x.saturated = fill > SaturationThreshold
	if x.saturated {
		x.stats.Saturated++
	}
	x.cands = x.tree.Match(x.summary, x.cands[:0])
	return x.cands
}

func (x *Index) count(exact int) {
	x.stats.Candidates += int64(len(x.cands))
	x.stats.Exact += int64(exact)
	if x.saturated {
		x.stats.SaturatedCandidates += int64(len(x.cands))
		x.stats.SaturatedExact += int64(exact)
	}
	if len(x.cands) > 0 {
		x.stats.Forwarded++
		if exact == 0 {
			x.stats.ForwardedFalse++
		}
	}
}

// Counters returns the counts since the index was made.
func (x *Index) Counters() Stats { return x.stats }

// Stats returns the counters as one line for `sift match`.
func (x *Index) Stats() string {
	return fmt.Sprintf("%s (%v, %d terms, %d tree nodes): %v", x.name, x.dict.p, x.dict.Len(), x.tree.Nodes(), x.stats)
}

// Dictionary returns the index's dictionary (for inspection).
func (x *Index) Dictionary() *Dictionary { return x.dict }

// Tree returns the index's tree (for inspection).
func (x *Index) Tree() Tree { return x.tree }
