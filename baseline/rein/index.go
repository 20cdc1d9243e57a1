package rein

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/sift-pubsub/sift/baseline"
	"github.com/sift-pubsub/sift/baseline/internal/interval"
	"github.com/sift-pubsub/sift/baseline/internal/num"
	"github.com/sift-pubsub/sift/baseline/internal/slots"
	"github.com/sift-pubsub/sift/match"
)

// Config configures a REIN index. A zero field takes the default written
// beside it.
type Config struct {
	// Lo and Hi bound the value domain the buckets cut, [Lo, Hi)
	// (default 0 and 1,000,000, the HEM workload's domain).
	Lo, Hi float64
	// Buckets is the number of buckets per attribute (default 1000).
	Buckets int
}

// Defaults of Config.
const (
	DefaultHi      = 1_000_000
	DefaultBuckets = 1000
)

func (c Config) withDefaults() Config {
	if c.Lo == 0 && c.Hi == 0 {
		c.Hi = DefaultHi
	}
	if c.Buckets == 0 {
		c.Buckets = DefaultBuckets
	}
	return c
}

// Validate reports why the configuration (after defaults) is unusable.
func (c Config) Validate() error {
	c = c.withDefaults()
	if !(c.Lo < c.Hi) || math.IsInf(c.Lo, 0) || math.IsInf(c.Hi, 0) || c.Buckets < 1 {
		return fmt.Errorf("rein: want finite Lo < Hi and Buckets >= 1, got [%v, %v) and %d", c.Lo, c.Hi, c.Buckets)
	}
	return nil
}

func init() {
	match.RegisterIndex(match.IndexInfo{
		Name:        "rein",
		Description: "baseline: REIN (Qian et al. 2014), bucketed backward matching with bitsets; numeric ranges only",
		New:         baseline.MustDefault(New),
	})
}

// Index is a REIN matcher.
type Index struct {
	cfg   Config
	width float64
	slots *slots.Table
	attrs map[string]*attr
	ivs   [][]interval.Interval // by slot
	live  []uint64              // bitset of live slots
	marks []uint64
}

// attr is one attribute's buckets of low and high ends, and the bitset of
// the subscriptions constraining it.
type attr struct {
	name  string
	lows  []bucket
	highs []bucket
	has   []uint64
	n     int // intervals on this attribute
}

// New returns an empty index.
func New(cfg Config) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Index{cfg: cfg, width: (cfg.Hi - cfg.Lo) / float64(cfg.Buckets),
		slots: slots.New("rein"), attrs: make(map[string]*attr)}, nil
}

// bucketOf returns the bucket of a value, clamped to the domain.
func (x *Index) bucketOf(k num.Key) int {
	b := math.Floor((k.F - x.cfg.Lo) / x.width)
	switch {
	case b < 0:
		return 0
	case b >= float64(x.cfg.Buckets):
		return x.cfg.Buckets - 1
	}
	return int(b)
}

// Insert adds a subscription, or refuses a filter with a constraint that
// is not a numeric ==, <, <=, > or >=.
func (x *Index) Insert(id match.ID, f match.Filter) error {
	if err := x.slots.CheckNew(id); err != nil {
		return err
	}
	ivs, err := interval.FromFilter("rein", f)
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
		ivs, err := interval.FromFilter("rein", f)
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
		if int(s)/64 >= len(x.live) {
			x.live = append(x.live, 0)
			for _, a := range x.attrs {
				a.has = append(a.has, 0)
			}
		}
	}
	x.ivs[s] = ivs
	x.live[s>>6] |= 1 << (s & 63)
	for i := range ivs {
		iv := &ivs[i]
		a := x.attrs[iv.Attr]
		if a == nil {
			a = &attr{name: iv.Attr, lows: make([]bucket, x.cfg.Buckets), highs: make([]bucket, x.cfg.Buckets),
				has: make([]uint64, len(x.live))}
			x.attrs[iv.Attr] = a
		}
		a.n++
		a.has[s>>6] |= 1 << (s & 63)
		if iv.LoBounded() {
			a.lows[x.bucketOf(iv.Lo)].add(iv.Lo, iv.LoOpen, s)
		}
		if iv.HiBounded() {
			a.highs[x.bucketOf(iv.Hi)].add(iv.Hi, iv.HiOpen, s)
		}
	}
}

// Delete removes a subscription.
func (x *Index) Delete(id match.ID) error {
	s, err := x.slots.Slot(id)
	if err != nil {
		return err
	}
	for i := range x.ivs[s] {
		iv := &x.ivs[s][i]
		a := x.attrs[iv.Attr]
		if iv.LoBounded() {
			a.lows[x.bucketOf(iv.Lo)].remove(iv.Lo, s)
		}
		if iv.HiBounded() {
			a.highs[x.bucketOf(iv.Hi)].remove(iv.Hi, s)
		}
		a.has[s>>6] &^= 1 << (s & 63)
		if a.n--; a.n == 0 {
			delete(x.attrs, iv.Attr)
		}
	}
	x.ivs[s] = nil
	x.live[s>>6] &^= 1 << (s & 63)
	x.slots.Free(id)
	return nil
}

// Len returns the number of subscriptions.
func (x *Index) Len() int { return x.slots.Len() }

// Match marks every subscription the event fails, attribute by attribute,
// and appends the unmarked live ones.
func (x *Index) Match(e match.Event, dst []match.ID) []match.ID {
	if cap(x.marks) < len(x.live) {
		x.marks = make([]uint64, len(x.live))
	}
	marks := x.marks[:len(x.live)]
	clear(marks)
	for _, a := range x.attrs {
		v, ok := e.Get(a.name)
		k, isNum := num.Of(v)
		if !ok || !isNum {
			for w, h := range a.has {
				marks[w] |= h
			}
			continue
		}
		b := x.bucketOf(k)
		a.lows[b].markLowsAbove(k, marks)
		for i := b + 1; i < len(a.lows); i++ {
			a.lows[i].markAll(marks)
		}
		a.highs[b].markHighsBelow(k, marks)
		for i := range b {
			a.highs[i].markAll(marks)
		}
	}
	for w, m := range marks {
		free := x.live[w] &^ m
		for free != 0 {
			s := uint32(w*64 + bits.TrailingZeros64(free))
			dst = append(dst, x.slots.ID(s))
			free &= free - 1
		}
	}
	return dst
}
