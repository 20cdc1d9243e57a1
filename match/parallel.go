package match

import (
	"fmt"
	"runtime"
	"sync"
)

func init() {
	RegisterIndex(IndexInfo{
		Name:        "fast-parallel",
		Description: "fast, its subscriptions split into one shard per core (GOMAXPROCS) from 2^18 on, each event (or batch) matched on every shard at once",
		New:         func() Index { return NewParallel(0, FastConfig{}) },
	})
}

// Parallel matches one event on several cores at once: its subscriptions
// are split by id into shards, each a Fast index, and Match runs every
// shard in its own goroutine (the caller's runs the first). The shards
// together hold what one Fast would, so memory is the same; per event it
// costs the shards' fixed work (a search of the cell boundaries and bounds
// per attribute, a few hundred nanoseconds at the HEM workload's 20) more
// than Fast, plus a goroutine handoff, and saves nearly all of the bitset
// ORs and bound marks of all but one shard. Like every index it is not
// safe for concurrent use.
//
// MatchBatch is the cheaper way to use it: every shard matches the whole
// batch in one goroutine, so the handoff and the wait are paid once per
// batch instead of once per event (see BatchMatcher).
//
// A small index does not pay for the handoff (an event takes a few
// microseconds), so until it has held splitAt subscriptions (default
// ParallelSplitAt) a Parallel keeps them all in its first shard and
// matches like Fast on the caller's goroutine. The insert or load that
// reaches splitAt spreads them over the shards (a rebuild of the
// subscriptions held, fewer than splitAt); from then on it stays spread.
type Parallel struct {
	cfg     FastConfig
	loc     *locTable // the shards' id table, shared
	shards  []*Fast
	split   bool // the subscriptions are spread over the shards by id
	splitAt int
	dsts    [][]ID // per shard but the first: its matches of the current event
	// batch[i][j], for shards i > 0, is shard i's matches of event j of
	// the current batch.
	batch [][][]ID
	wg    sync.WaitGroup
}

// ParallelSplitAt is the number of subscriptions from which a Parallel
// index spreads them over its shards.
const ParallelSplitAt = 1 << 18

// NewParallel returns an empty index of n shards, each a Fast index of
// configuration cfg; n <= 0 means one shard per core (GOMAXPROCS).
func NewParallel(n int, cfg FastConfig) *Parallel {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	p := &Parallel{cfg: cfg, loc: &locTable{}, shards: make([]*Fast, n), dsts: make([][]ID, n), batch: make([][][]ID, n), splitAt: ParallelSplitAt}
	for i := range p.shards {
		p.shards[i] = newFastShared(cfg, p.loc)
	}
	p.split = n == 1
	return p
}

// SetSplitAt sets the number of subscriptions from which p spreads them
// over its shards (ParallelSplitAt by default; 0 spreads from the first).
// It must be called before the first Insert or Load. Below the default,
// every event costs one goroutine handoff per shard, which pays only for
// large enough sets of subscriptions; tests of parallel matching at small
// sizes use it.
func (p *Parallel) SetSplitAt(n int) *Parallel {
	p.splitAt = n
	return p
}

// Shards returns the number of shards.
func (p *Parallel) Shards() int { return len(p.shards) }

// shard returns the shard holding an id.
func (p *Parallel) shard(id ID) *Fast {
	if !p.split {
		return p.shards[0]
	}
	return p.shards[p.shardOf(id)]
}

// shardOf returns the shard an id belongs to once spread: a
// multiplicative hash, so that dense and strided ids alike spread evenly.
func (p *Parallel) shardOf(id ID) int {
	h := uint64(id) * 0x9e3779b97f4a7c15
	return int((h >> 32) % uint64(len(p.shards)))
}

// spread moves the subscriptions of the first shard over all of them.
func (p *Parallel) spread() {
	fresh := make([]*Fast, len(p.shards))
	for i := range fresh {
		fresh[i] = newFastShared(p.cfg, p.loc)
	}
	p.shards[0].spreadInto(fresh, p.shardOf)
	p.shards, p.split = fresh, true
}

// Len returns the number of subscriptions.
func (p *Parallel) Len() int {
	n := 0
	for _, s := range p.shards {
		n += s.Len()
	}
	return n
}

// Insert adds a subscription to its shard; the one that makes splitAt
// spreads the subscriptions over the shards.
func (p *Parallel) Insert(id ID, f Filter) error {
	if err := p.shard(id).Insert(id, f); err != nil {
		return err
	}
	if !p.split && p.shards[0].Len() >= p.splitAt {
		p.spread()
	}
	return nil
}

// Delete removes a subscription from its shard.
func (p *Parallel) Delete(id ID) error { return p.shard(id).Delete(id) }

// Match appends the ids of the subscriptions e matches: the first shard's,
// then the others'.
func (p *Parallel) Match(e Event, dst []ID) []ID {
	if !p.split || len(p.shards) == 1 {
		return p.shards[0].Match(e, dst)
	}
	p.each(func(i int) {
		if i > 0 {
			p.dsts[i] = p.shards[i].Match(e, p.dsts[i][:0])
		}
	}, func() { dst = p.shards[0].Match(e, dst) })
	for _, d := range p.dsts[1:] {
		dst = append(dst, d...)
	}
	return dst
}

// MatchBatch appends to dsts[j] the matches of evs[j], for every j, as
// Match would (the first shard's, then the others'): each shard matches
// the whole batch in a goroutine of its own (the first on the caller's),
// and the caller then appends the other shards' matches.
func (p *Parallel) MatchBatch(evs []Event, dsts [][]ID) [][]ID {
	dsts = growBatch(dsts, len(evs))
	if !p.split || len(p.shards) == 1 || len(evs) == 0 {
		for j, e := range evs {
			dsts[j] = p.shards[0].Match(e, dsts[j])
		}
		return dsts
	}
	p.each(func(i int) {
		if i > 0 {
			b := growBatch(p.batch[i], len(evs))
			for j, e := range evs {
				b[j] = p.shards[i].Match(e, b[j][:0])
			}
			p.batch[i] = b
		}
	}, func() {
		for j, e := range evs {
			dsts[j] = p.shards[0].Match(e, dsts[j])
		}
	})
	for j := range evs {
		for _, b := range p.batch[1:] {
			dsts[j] = append(dsts[j], b[j]...)
		}
	}
	return dsts
}

// each runs fn(i) for every shard i > 0 in a goroutine of its own and
// first on the caller's, then waits for them all.
func (p *Parallel) each(fn func(i int), first func()) {
	p.wg.Add(len(p.shards) - 1)
	for i := 1; i < len(p.shards); i++ {
		go func() {
			defer p.wg.Done()
			fn(i)
		}()
	}
	first()
	p.wg.Wait()
}

// Compact compacts every shard, in parallel.
func (p *Parallel) Compact() {
	if !p.split {
		p.shards[0].Compact()
		return
	}
	p.each(func(i int) {
		if i > 0 {
			p.shards[i].Compact()
		}
	}, p.shards[0].Compact)
}

// Load inserts many subscriptions at once, one segment per shard; it fails
// without change on a duplicate id.
func (p *Parallel) Load(ids []ID, filters []Filter) error {
	if len(ids) != len(filters) {
		return fmt.Errorf("fast-parallel: load: %d ids for %d filters", len(ids), len(filters))
	}
	l := p.NewSizedLoader(len(ids))
	for i, id := range ids {
		if err := l.Add(id, filters[i]); err != nil {
			return err
		}
	}
	return l.Finish()
}

// NewLoader returns a loader feeding each shard's own loader, or before
// the subscriptions are spread, one loader per shard over a fresh index
// each: Finish then spreads the held subscriptions into those if the
// total reaches splitAt, and otherwise gathers the loaded ones into the
// first shard.
func (p *Parallel) NewLoader() Loader { return p.NewSizedLoader(0) }

// NewSizedLoader returns a loader of about n subscriptions (see
// NewLoader): each shard takes the layout of an index of the whole
// Parallel's size after the load (see FastConfig.Resolve), since memory
// is the whole's, whatever the shards' number.
func (p *Parallel) NewSizedLoader(n int) Loader {
	l := &parallelLoader{p: p, loaders: make([]Loader, len(p.shards)), into: p.shards}
	if !p.split {
		l.into = make([]*Fast, len(p.shards))
		for i := range l.into {
			l.into[i] = newFastShared(p.cfg, p.loc)
		}
	}
	total := p.Len() + n
	for i, s := range l.into {
		s.resize(total) // the whole's layout; the shard's own share resolves to no other
		l.loaders[i] = s.NewSizedLoader(n / len(l.into))
	}
	return l
}

type parallelLoader struct {
	p       *Parallel
	into    []*Fast // the indexes the loaders fill, by shard
	loaders []Loader
	added   int
}

func (l *parallelLoader) Add(id ID, f Filter) error {
	if !l.p.split {
		if _, dup := l.p.shards[0].loc.get(id); dup {
			return fmt.Errorf("fast-parallel: load: subscription %d already present", id)
		}
	}
	if err := l.loaders[l.p.shardOf(id)].Add(id, f); err != nil {
		return err
	}
	l.added++
	return nil
}

// Finish builds every shard's segment, in parallel. An id repeated in the
// load lands twice in one shard, whose Finish fails; the shards are
// checked before any of them is built, so a failed Finish changes none.
func (l *parallelLoader) Finish() error {
	for _, s := range l.loaders {
		if err := s.(*fastLoader).check(); err != nil {
			return err
		}
	}
	errs := make([]error, len(l.loaders))
	l.p.each(func(i int) {
		if i > 0 {
			errs[i] = l.loaders[i].Finish()
		}
	}, func() { errs[0] = l.loaders[0].Finish() })
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if l.p.split {
		return nil
	}
	if first := l.p.shards[0]; first.Len()+l.added >= l.p.splitAt {
		first.spreadInto(l.into, l.p.shardOf)
		l.p.shards, l.p.split = l.into, true
		return nil
	}
	for _, x := range l.into {
		x.spreadInto(l.p.shards[:1], func(ID) int { return 0 })
	}
	return nil
}
