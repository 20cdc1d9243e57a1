package match

import (
	"fmt"
	"math"
	"slices"
)

func init() {
	RegisterIndex(IndexInfo{
		Name:        "fast",
		Description: "backward bitset matcher (HEM/REIN style cells per attribute) with online insert and delete",
		New:         func() Index { return NewFast(FastConfig{}) },
	})
}

// FastConfig tunes the Fast index. The zero value selects the defaults.
type FastConfig struct {
	// MaxCells bounds the cells an attribute's value range is cut into.
	// More cells mean fewer bounds compared and marked per event and one
	// more bitset per cell in memory, one bit per subscription and
	// dimension (docs/benchmarks.md, "Fast's cells", has the figures).
	// The default (zero) is 48 cells, 20 for a segment of 2^22
	// subscriptions or more (where memory, not time, is the bound), or for
	// a segment of fewer than 2^20/48 (about 22,000) subscriptions as many
	// as 2^20 bits of cell bitsets per dimension hold, up to 64 (at most 8
	// bytes per subscription and dimension): with a pivot window (see
	// fast_pivot.go) a cell costs nothing more per event, and fewer bounds
	// per cell are compared; beyond 64 cells matching is no faster.
	MaxCells int
	// BoundsPerCell is the number of interval bounds a cell should hold
	// before the range is cut further (default 16). It only matters while
	// MaxCells does not bind, i.e. for small segments: there fewer bounds
	// per cell mean fewer bounds compared per event.
	BoundsPerCell int
	// TailSize is the number of new subscriptions kept unindexed, matched
	// one by one, before they are indexed as a segment (default 512).
	TailSize int
	// MergeFactor merges a segment into the previous one when it grows to
	// within this factor of its size (default 4), keeping the number of
	// segments logarithmic.
	MergeFactor int
	// SegmentSlots, when positive, is the most subscriptions a segment
	// holds: a bulk load builds segments of this size, merges stop there
	// and Compact packs segments up to it. A smaller segment's fail words
	// stay in a nearer cache while an event's bounds are marked in them,
	// and a load holds the build lists of one segment at a time; each
	// segment adds its per-attribute searches to every event. The default
	// (zero) is no limit: one segment per load, merges without end.
	SegmentSlots int
	// NarrowSlots keeps the slots of a segment's interval bounds in 3
	// bytes instead of 4 when the segment has at most 2^23 subscriptions
	// (see fast_slots24.go): 20 bytes less per subscription of 10 ranges,
	// for more work per bound marked (docs/benchmarks.md has the cost),
	// which pays where memory, not time, is the bound.
	NarrowSlots bool
	// WideSlots keeps 4-byte slots where the large-index defaults (see
	// Resolve) would narrow them.
	WideSlots bool
}

// The layout a Fast index takes by itself from HugeSubscriptions
// subscriptions on (see FastConfig.Resolve), where memory is the bound:
// segments of hugeSegmentSlots, so that a load holds one segment's build
// lists at a time and no merge or Compact builds a segment beyond them;
// hugeCells cells per dimension, and 3-byte slots. At 10^7 HEM-shaped
// subscriptions it holds 1.73 GB of heap where one segment with the
// defaults below would need 4-byte slots and a ~2 GB builder.
const (
	HugeSubscriptions = 1 << 22
	hugeSegmentSlots  = 1 << 20
	hugeCells         = 24
)

// Resolve returns the configuration a Fast index of n subscriptions
// builds with: c's own settings, and where c leaves them zero, from
// HugeSubscriptions subscriptions on, segments of at most 2^20
// subscriptions, 24 cells and 3-byte slots (unless WideSlots).
func (c FastConfig) Resolve(n int) FastConfig {
	if n >= HugeSubscriptions {
		if c.SegmentSlots <= 0 {
			c.SegmentSlots = hugeSegmentSlots
		}
		if c.MaxCells <= 0 {
			c.MaxCells = hugeCells
		}
		c.NarrowSlots = c.NarrowSlots || !c.WideSlots
	}
	c.populate()
	return c
}

func (c *FastConfig) populate() {
	if c.BoundsPerCell <= 0 {
		c.BoundsPerCell = 16
	}
	if c.TailSize <= 0 {
		c.TailSize = 512
	}
	if c.MergeFactor <= 1 {
		c.MergeFactor = 4
	}
	if c.SegmentSlots <= 0 {
		c.SegmentSlots = math.MaxInt
	}
}

// Defaults of FastConfig.MaxCells: autoCellsLarge cells (autoCellsHuge
// from autoHugeSlots subscriptions on), or for a segment of n
// subscriptions as many as autoCellBits/n, up to autoCellsMax.
const (
	autoCellsLarge = 48
	autoCellsHuge  = 20
	autoHugeSlots  = 1 << 22
	autoCellBits   = 1 << 20
	autoCellsMax   = 64
)

// maxCells returns the cells a dimension of a segment of n subscriptions
// may have.
func (c *FastConfig) maxCells(n int) int {
	if c.MaxCells > 0 {
		return c.MaxCells
	}
	if n >= autoHugeSlots {
		return autoCellsHuge
	}
	return min(autoCellsMax, max(autoCellsLarge, autoCellBits/max(n, 1)))
}

// Fast is the exact matching index for many subscriptions. It is a backward
// matcher in the line of REIN and HEM: for every attribute, precomputed
// bitsets mark the subscriptions an event value fails (its interval misses
// the value's cell), a few bounds near the value are compared one by one,
// and the subscriptions no attribute marked are the matches. Strings,
// numbers and bools each have their own dimension per attribute; equality
// is a hash lookup; suffix and contains are checked one by one. When most
// of a segment's subscriptions want one value of a string attribute (a
// stock symbol, a topic), its slots are grouped by that value, and an event
// is matched only against the words of its value's group and of the
// subscriptions without such a point (see fast_pivot.go).
//
// Subscriptions arrive in a small tail matched by brute force; a full tail
// becomes an immutable segment, and segments of similar size merge, as in a
// log-structured merge tree, so inserts cost amortised O(log n) rebuild work.
// Deletes clear a live bit; a segment more than half dead is rebuilt.
type Fast struct {
	cfg       FastConfig      // in force: user resolved for the index's size
	user      FastConfig      // as given to NewFast
	loc       *locTable       // shared by a Parallel's shards
	never     map[ID]struct{} // unsatisfiable filters, stored nowhere
	segByNum  map[uint32]*segment
	nextNum   uint32
	tail      []tailSub
	tailScans int        // events matched against the tail since it last changed size
	segs      []*segment // largest first
	fail      []uint64   // scratch for matching
}

// A location says where a subscription is: segment number << 32 | slot.
// Segment number 0 is the tail; slot neverSlot of the tail marks a filter
// that is unsatisfiable and so stored nowhere.
const neverSlot = math.MaxUint32

func loc(seg, slot uint32) uint64       { return uint64(seg)<<32 | uint64(slot) }
func unloc(l uint64) (seg, slot uint32) { return uint32(l >> 32), uint32(l) }

type tailSub struct {
	id   ID
	f    Filter
	sets attrSets // f summarised per attribute, for the build
}

// NewFast returns an empty Fast index.
func NewFast(cfg FastConfig) *Fast { return newFastShared(cfg, &locTable{}) }

// newFastShared returns an empty Fast index whose id table is t, which
// other indexes holding other ids may share (a Parallel's shards do: one
// table of 8 bytes per id instead of one per shard over the whole range).
func newFastShared(cfg FastConfig, t *locTable) *Fast {
	return &Fast{cfg: cfg.Resolve(0), user: cfg, loc: t, segByNum: make(map[uint32]*segment)}
}

// resize sets the configuration in force for an index of n subscriptions
// (see FastConfig.Resolve); a layout once taken for a large index stays,
// so that no later merge or Compact builds a segment beyond it.
func (x *Fast) resize(n int) {
	if n >= HugeSubscriptions {
		x.cfg = x.user.Resolve(n)
	}
}

// Len returns the number of subscriptions.
func (x *Fast) Len() int {
	n := len(x.tail) + len(x.never)
	for _, s := range x.segs {
		n += s.nlive
	}
	return n
}

// Insert adds a subscription.
func (x *Fast) Insert(id ID, f Filter) error {
	if _, dup := x.loc.get(id); dup {
		return fmt.Errorf("fast: subscription %d already present", id)
	}
	sets, empty := filterSets(f)
	if empty {
		x.setNever(id)
		return nil
	}
	x.loc.set(id, loc(0, uint32(len(x.tail))))
	x.tail = append(x.tail, tailSub{id: id, f: f, sets: sets})
	x.tailScans = 0
	if len(x.tail) >= x.cfg.TailSize {
		x.flushTail()
	}
	return nil
}

// Load inserts many subscriptions at once, building one segment for all of
// them; it fails without change on a duplicate id.
func (x *Fast) Load(ids []ID, filters []Filter) error {
	if len(ids) != len(filters) {
		return fmt.Errorf("fast: load: %d ids for %d filters", len(ids), len(filters))
	}
	l := x.NewSizedLoader(len(ids))
	for i, id := range ids {
		if err := l.Add(id, filters[i]); err != nil {
			return err
		}
	}
	return l.Finish()
}

// Delete removes a subscription.
func (x *Fast) Delete(id ID) error {
	l, ok := x.loc.get(id)
	if !ok {
		return fmt.Errorf("fast: subscription %d not present", id)
	}
	x.loc.remove(id)
	switch num, slot := unloc(l); {
	case num == 0 && slot == neverSlot:
		delete(x.never, id)
	case num == 0:
		last := len(x.tail) - 1
		x.tail[slot] = x.tail[last]
		x.tail = x.tail[:last]
		if int(slot) < last {
			x.loc.set(x.tail[slot].id, loc(0, slot))
		}
	default:
		seg := x.segByNum[num]
		seg.delete(slot)
		if seg.nlive*2 < seg.n {
			x.rebuild(seg)
		}
	}
	return nil
}

// tailScanLimit is how many events may be matched one by one against the
// same unindexed tail before it is indexed: building a segment costs about
// as much per subscription as a few dozen brute-force checks.
const tailScanLimit = 32

// Match appends the ids of the subscriptions e matches. It may index the
// tail first (when it has been scanned often enough), so like every other
// method it must not run concurrently with others.
func (x *Fast) Match(e Event, dst []ID) []ID {
	if len(x.tail) > 0 {
		if x.tailScans++; x.tailScans > tailScanLimit {
			x.flushTail()
		}
	}
	for i := range x.tail {
		if x.tail[i].f.Matches(e) {
			dst = append(dst, x.tail[i].id)
		}
	}
	for _, s := range x.segs {
		dst = s.match(e, x.fail, dst)
	}
	return dst
}

// Compact indexes the tail and merges the segments into one, or as few of
// at most SegmentSlots subscriptions as it can: the fastest shape to match
// against. It costs a rebuild of most of the index; a router may call it
// when idle.
func (x *Fast) Compact() {
	if len(x.tail) > 0 {
		x.flushTail()
	}
	if len(x.segs) <= 1 {
		return
	}
	// Pack the segments, largest first, into as few of at most
	// SegmentSlots subscriptions as a greedy fill makes.
	old := x.segs
	x.segs = nil
	b, in := newSegBuilder(), 0
	for _, s := range old {
		if in == 0 && s.nlive == s.n && 2*s.n > x.cfg.SegmentSlots {
			x.segs = append(x.segs, s) // full enough, and nothing to drop
			continue
		}
		if in > 0 && in+s.nlive > x.cfg.SegmentSlots {
			x.adoptBuilt(b.build(&x.cfg))
			b, in = newSegBuilder(), 0
		}
		b.addSegment(s)
		in += s.nlive
		delete(x.segByNum, s.num)
	}
	if in > 0 {
		x.adoptBuilt(b.build(&x.cfg))
	}
	slices.SortStableFunc(x.segs, func(a, b *segment) int { return b.nlive - a.nlive })
}

// adoptBuilt appends a segment without merging.
func (x *Fast) adoptBuilt(s *segment) {
	x.segs = append(x.segs, s)
	x.adopt(s)
}

// flushTail indexes the tail as a new segment.
func (x *Fast) flushTail() {
	x.tailScans = 0
	x.resize(x.Len())
	b := newSegBuilder()
	for _, t := range x.tail {
		b.addFilter(t.id, t.f, t.sets)
	}
	clear(x.tail) // drop the references to filters
	x.tail = x.tail[:0]
	x.addSegment(b.build(&x.cfg))
}

// addSegment appends a segment and merges segments, size-tiered: whenever
// MergeFactor segments share a tier (their sizes over TailSize have the same
// integer logarithm in base MergeFactor), they become one segment of the
// next tier. Every subscription is thus rebuilt about log_F(n/TailSize)
// times, and there are at most F-1 segments per tier to match.
func (x *Fast) addSegment(s *segment) {
	x.segs = append(x.segs, s)
	x.adopt(s)
	for {
		group := x.fullTier()
		if group == nil {
			break
		}
		b := newSegBuilder()
		for _, g := range group {
			b.addSegment(g)
			delete(x.segByNum, g.num)
		}
		x.segs = slices.DeleteFunc(x.segs, func(s *segment) bool { return slices.Contains(group, s) })
		m := b.build(&x.cfg)
		x.segs = append(x.segs, m)
		x.adopt(m)
	}
	slices.SortStableFunc(x.segs, func(a, b *segment) int { return b.nlive - a.nlive })
}

// fullTier returns MergeFactor segments of one tier that together hold
// at most SegmentSlots subscriptions, or nil.
func (x *Fast) fullTier() []*segment {
	byTier := make(map[int][]*segment)
	sum := make(map[int]int)
	for _, s := range x.segs {
		t := x.tier(s.nlive)
		byTier[t] = append(byTier[t], s)
		sum[t] += s.nlive
		if len(byTier[t]) == x.cfg.MergeFactor {
			if sum[t] <= x.cfg.SegmentSlots {
				return byTier[t]
			}
			byTier[t], sum[t] = byTier[t][1:], sum[t]-byTier[t][0].nlive
		}
	}
	return nil
}

func (x *Fast) tier(n int) int {
	t := 0
	for n >= x.cfg.TailSize*x.cfg.MergeFactor {
		n /= x.cfg.MergeFactor
		t++
	}
	return t
}

// rebuild replaces a mostly dead segment by one of its live subscriptions.
func (x *Fast) rebuild(s *segment) {
	i := slices.Index(x.segs, s)
	x.segs = slices.Delete(x.segs, i, i+1)
	delete(x.segByNum, s.num)
	if s.nlive == 0 {
		return
	}
	b := newSegBuilder()
	b.addSegment(s)
	x.addSegment(b.build(&x.cfg))
}

// setNever records an unsatisfiable filter's id, stored nowhere. Like
// adopt it may run beside another shard's (a Parallel's Finish).
func (x *Fast) setNever(id ID) {
	if x.never == nil {
		x.never = make(map[ID]struct{})
	}
	x.never[id] = struct{}{}
	x.loc.mu.Lock()
	x.loc.set(id, loc(0, neverSlot))
	x.loc.mu.Unlock()
}

// adopt points the locations of a segment's live subscriptions at it and
// grows the scratch arrays to its size.
func (x *Fast) adopt(s *segment) {
	x.nextNum++
	s.num = x.nextNum
	x.segByNum[s.num] = s
	var maxID ID
	for slot := range s.n {
		if s.live.Test(uint(slot)) {
			maxID = max(maxID, s.id(slot))
		}
	}
	x.loc.mu.Lock()
	x.loc.reserve(maxID, s.nlive)
	for slot := range s.n {
		if s.live.Test(uint(slot)) {
			x.loc.set(s.id(slot), loc(s.num, uint32(slot)))
		}
	}
	x.loc.mu.Unlock()
	if w := s.words(); w > len(x.fail) {
		x.fail = make([]uint64, w)
	}
}
