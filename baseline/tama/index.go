package tama

import (
	"fmt"
	"math"

	"github.com/sift-pubsub/sift/baseline"
	"github.com/sift-pubsub/sift/baseline/internal/interval"
	"github.com/sift-pubsub/sift/baseline/internal/num"
	"github.com/sift-pubsub/sift/baseline/internal/slots"
	"github.com/sift-pubsub/sift/match"
)

// Config configures a TAMA index. A zero field takes the default written
// beside it.
type Config struct {
	// Lo and Hi bound the domain the cells cut, [Lo, Hi) (default 0 and
	// 1,000,000, the HEM workload's domain).
	Lo, Hi float64
	// Levels is the number of levels of cells, the last with
	// 2^(Levels-1) cells (default 13; at most 24).
	Levels int
}

// Defaults of Config.
const (
	DefaultHi     = 1_000_000
	DefaultLevels = 13
)

func (c Config) withDefaults() Config {
	if c.Lo == 0 && c.Hi == 0 {
		c.Hi = DefaultHi
	}
	if c.Levels == 0 {
		c.Levels = DefaultLevels
	}
	return c
}

// Validate reports why the configuration (after defaults) is unusable.
func (c Config) Validate() error {
	c = c.withDefaults()
	if !(c.Lo < c.Hi) || math.IsInf(c.Lo, 0) || math.IsInf(c.Hi, 0) || c.Levels < 1 || c.Levels > 24 {
		return fmt.Errorf("tama: want finite Lo < Hi and Levels in [1, 24], got [%v, %v) and %d", c.Lo, c.Hi, c.Levels)
	}
	return nil
}

func init() {
	match.RegisterIndex(match.IndexInfo{
		Name:        "tama",
		Description: "baseline: TAMA (Zhao and Wu 2011), counting over levels of cells, exact; numeric ranges only",
		New:         baseline.MustDefault(New),
	})
}

// Index is an exact TAMA matcher.
type Index struct {
	cfg    Config
	leaves int       // cells at the last level
	bounds []float64 // bounds[k] is the lower bound of leaf k (bounds[0] unused: minus infinity)
	slots  *slots.Table
	attrs  map[string]*attr
	ivs    [][]interval.Interval // by slot
	need   []uint16              // intervals per slot
	count  []uint16
	always []uint32 // slots without intervals
	hits   []uint32
}

// attr is one attribute's cells: node 1 is level 0, nodes 2i and 2i+1 are
// the halves of node i, and node leaves+k is leaf k.
type attr struct {
	full    [][]uint32  // by node
	partial [][]partRef // by leaf
	n       int         // intervals on this attribute
}

// partRef names interval j of the subscription in slot s.
type partRef struct {
	s uint32
	j uint32
}

// New returns an empty index.
func New(cfg Config) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	leaves := 1 << (cfg.Levels - 1)
	bounds := make([]float64, leaves)
	w := (cfg.Hi - cfg.Lo) / float64(leaves)
	for k := 1; k < leaves; k++ {
		bounds[k] = cfg.Lo + float64(k)*w
	}
	return &Index{cfg: cfg, leaves: leaves, bounds: bounds, slots: slots.New("tama"), attrs: make(map[string]*attr)}, nil
}

// leafOf returns the last-level cell holding k: the largest leaf whose
// lower bound is at most k, by exact comparison.
func (x *Index) leafOf(k num.Key) int {
	n := x.leaves
	f := math.Floor((k.F - x.cfg.Lo) / (x.cfg.Hi - x.cfg.Lo) * float64(n))
	leaf := 0
	switch {
	case f >= float64(n):
		leaf = n - 1
	case f > 0:
		leaf = int(f)
	}
	for leaf > 0 && num.Less(k, num.Key{F: x.bounds[leaf]}) {
		leaf--
	}
	for leaf < n-1 && !num.Less(k, num.Key{F: x.bounds[leaf+1]}) {
		leaf++
	}
	return leaf
}

// cover calls full for every node the interval covers entirely, in the
// canonical decomposition, and partial for the (at most two) leaves it
// covers only in part.
func (x *Index) cover(iv *interval.Interval, full func(node int), partial func(leaf int)) {
	if c := num.Compare(iv.Lo, iv.Hi); c > 0 || c == 0 && (iv.LoOpen || iv.HiOpen) {
		return // empty
	}
	n := x.leaves
	la, lb := 0, n-1
	if iv.LoBounded() {
		la = x.leafOf(iv.Lo)
	}
	if iv.HiBounded() {
		lb = x.leafOf(iv.Hi)
		if iv.HiOpen && lb > 0 && iv.Hi == (num.Key{F: x.bounds[lb]}) {
			lb-- // every value of leaf lb is at or above the open end
		}
	}
	fullLow := !iv.LoBounded() || la > 0 && !iv.LoOpen && iv.Lo == (num.Key{F: x.bounds[la]})
	fullHigh := !iv.HiBounded() || lb < n-1 && !num.Less(iv.Hi, num.Key{F: x.bounds[lb+1]})
	fa, fb := la, lb
	if la == lb {
		if !(fullLow && fullHigh) {
			partial(la)
			return
		}
	} else {
		if !fullLow {
			partial(la)
			fa++
		}
		if !fullHigh {
			partial(lb)
			fb--
		}
	}
	// Bottom-up segment-tree decomposition of the leaf range [fa, fb].
	for l, r := fa+n, fb+n+1; l < r; l, r = l>>1, r>>1 {
		if l&1 == 1 {
			full(l)
			l++
		}
		if r&1 == 1 {
			r--
			full(r)
		}
	}
}

// Insert adds a subscription, or refuses a filter with a constraint that
// is not a numeric ==, <, <=, > or >=.
func (x *Index) Insert(id match.ID, f match.Filter) error {
	if err := x.slots.CheckNew(id); err != nil {
		return err
	}
	ivs, err := interval.FromFilter("tama", f)
	if err != nil {
		return err
	}
	x.add(id, ivs)
	return nil
}

// Load inserts many subscriptions, all or none.
func (x *Index) Load(ids []match.ID, filters []match.Filter) error {
	if err := x.slots.CheckLoad(ids, filters); err != nil {
		return err
	}
	all := make([][]interval.Interval, len(filters))
	for i, f := range filters {
		ivs, err := interval.FromFilter("tama", f)
		if err != nil {
			return fmt.Errorf("subscription %d: %w", ids[i], err)
		}
		all[i] = ivs
	}
	for i, id := range ids {
		x.add(id, all[i])
	}
	return nil
}

func (x *Index) add(id match.ID, ivs []interval.Interval) {
	s := x.slots.Add(id)
	if int(s) == len(x.ivs) {
		x.ivs = append(x.ivs, nil)
		x.need = append(x.need, 0)
		x.count = append(x.count, 0)
	}
	x.ivs[s], x.need[s] = ivs, uint16(len(ivs))
	if len(ivs) == 0 {
		x.always = append(x.always, s)
		return
	}
	for j := range ivs {
		iv := &ivs[j]
		a := x.attrs[iv.Attr]
		if a == nil {
			a = &attr{full: make([][]uint32, 2*x.leaves), partial: make([][]partRef, x.leaves)}
			x.attrs[iv.Attr] = a
		}
		a.n++
		x.cover(iv,
			func(node int) { a.full[node] = append(a.full[node], s) },
			func(leaf int) { a.partial[leaf] = append(a.partial[leaf], partRef{s, uint32(j)}) })
	}
}

// Delete removes a subscription.
func (x *Index) Delete(id match.ID) error {
	s, err := x.slots.Slot(id)
	if err != nil {
		return err
	}
	ivs := x.ivs[s]
	for j := range ivs {
		iv := &ivs[j]
		a := x.attrs[iv.Attr]
		x.cover(iv,
			func(node int) { a.full[node] = removeSlot(a.full[node], s) },
			func(leaf int) { a.partial[leaf] = removeRef(a.partial[leaf], partRef{s, uint32(j)}) })
		if a.n--; a.n == 0 {
			delete(x.attrs, iv.Attr)
		}
	}
	if len(ivs) == 0 {
		x.always = removeSlot(x.always, s)
	}
	x.ivs[s] = nil
	x.slots.Free(id)
	return nil
}

// Len returns the number of subscriptions.
func (x *Index) Len() int { return x.slots.Len() }

// Match counts, for each attribute of the event, the subscriptions listed
// in the cells containing its value (after an exact check for the partly
// covered last-level cell) and appends those whose count reaches their
// number of intervals.
func (x *Index) Match(e match.Event, dst []match.ID) []match.ID {
	clear(x.count)
	x.hits = x.hits[:0]
	count, need := x.count, x.need
	for i := range e.Len() {
		at := e.At(i)
		a := x.attrs[at.Name]
		if a == nil {
			continue
		}
		k, ok := num.Of(at.Value)
		if !ok {
			continue
		}
		leaf := x.leafOf(k)
		for _, r := range a.partial[leaf] {
			if iv := &x.ivs[r.s][r.j]; iv.Holds(k) {
				c := count[r.s] + 1
				count[r.s] = c
				if c == need[r.s] {
					x.hits = append(x.hits, r.s)
				}
			}
		}
		for node := leaf + x.leaves; node > 0; node >>= 1 {
			for _, s := range a.full[node] {
				c := count[s] + 1
				count[s] = c
				if c == need[s] {
					x.hits = append(x.hits, s)
				}
			}
		}
	}
	for _, s := range x.always {
		dst = append(dst, x.slots.ID(s))
	}
	for _, s := range x.hits {
		dst = append(dst, x.slots.ID(s))
	}
	return dst
}

func removeSlot(ss []uint32, s uint32) []uint32 {
	for i, t := range ss {
		if t == s {
			return append(ss[:i], ss[i+1:]...)
		}
	}
	return ss
}

func removeRef(rs []partRef, r partRef) []partRef {
	for i, t := range rs {
		if t == r {
			return append(rs[:i], rs[i+1:]...)
		}
	}
	return rs
}
