package match

import (
	"errors"
	"fmt"
	"slices"

	"github.com/bits-and-blooms/bitset"
)

// fastLoader bulk-loads a Fast index: every filter goes straight into one
// segment builder, which keeps the filter's bounds and slots in the
// compact lists the build sorts into the segment, never the filter itself.
// A load of n HEM-shaped filters thus holds about as much as the segment
// it builds, whatever the size of the filters it was given.
type fastLoader struct {
	x      *Fast
	b      *segBuilder
	expect int        // subscriptions the load was sized for; 0 if not told
	added  int        // subscriptions added so far
	built  []*segment // full segments, adopted at Finish
	never  []ID       // unsatisfiable filters, stored nowhere
	done   bool
}

// NewLoader returns a loader that builds one segment of every
// subscription it is given, or segments of at most SegmentSlots (see
// Loader).
func (x *Fast) NewLoader() Loader { return x.NewSizedLoader(0) }

// NewSizedLoader returns a loader of about n subscriptions: when the index
// will then hold HugeSubscriptions or more, x takes the large-index layout
// first (see FastConfig.Resolve), so that the load builds segments of
// 2^20 instead of one builder of them all.
func (x *Fast) NewSizedLoader(n int) Loader {
	x.resize(x.Len() + n)
	return &fastLoader{x: x, b: newSegBuilder(), expect: n}
}

var errLoaderDone = errors.New("fast: load: loader already finished")

func (l *fastLoader) Add(id ID, f Filter) error {
	if l.done {
		return errLoaderDone
	}
	if _, dup := l.x.loc.get(id); dup {
		return fmt.Errorf("fast: load: subscription %d already present", id)
	}
	l.added++
	sets, empty := filterSets(f)
	if empty {
		l.never = append(l.never, id)
		return nil
	}
	l.b.addFilter(id, f, sets)
	if len(l.b.ids) >= l.x.cfg.SegmentSlots {
		l.nextSegment()
	}
	return nil
}

// nextSegment builds the full segment and starts the next builder, its
// lists presized from this one's for the subscriptions still expected
// (see segBuilder.presize); a load not told its size lets them grow, as
// the next segment may be much smaller.
func (l *fastLoader) nextSegment() {
	var sizes map[string]listSizes
	full := len(l.b.ids)
	left := l.expect - l.added
	if left > 0 {
		sizes = l.b.sizes()
	}
	l.built = append(l.built, l.b.build(&l.x.cfg))
	l.b = newSegBuilder()
	if sizes != nil {
		l.b.presize(sizes, full, min(1, float64(left)/float64(full)))
	}
}

func (l *fastLoader) Finish() error {
	if l.done {
		return errLoaderDone
	}
	err := l.check()
	l.done = true
	if err != nil {
		return err
	}
	for _, id := range l.never {
		l.x.setNever(id)
	}
	for _, s := range l.built {
		l.x.addSegment(s)
	}
	if len(l.b.ids) > 0 {
		l.x.addSegment(l.b.build(&l.x.cfg))
	}
	l.b, l.built, l.never = nil, nil, nil
	return nil
}

// check reports a repeated id, which Finish would fail on. Dense ids (a
// file's line numbers, a router's reused ids) are checked in a bitset
// over their range, a bit per id: at 10^7 ids 1.25 MB instead of an
// 80 MB sorted copy at the load's peak; sparse ones are sorted.
func (l *fastLoader) check() error {
	if l.done {
		return errLoaderDone
	}
	each := func(fn func(ID) bool) {
		for _, s := range l.built {
			for slot := range s.n {
				if !fn(s.id(slot)) {
					return
				}
			}
		}
		for _, ids := range [][]ID{l.b.ids, l.never} {
			for _, id := range ids {
				if !fn(id) {
					return
				}
			}
		}
	}
	n, maxID := 0, ID(0)
	each(func(id ID) bool { n, maxID = n+1, max(maxID, id); return true })
	var dup ID
	found := false
	if maxID < ID(denseCheckFactor*n+1024) {
		seen := bitset.New(uint(maxID) + 1)
		each(func(id ID) bool {
			if found = seen.Test(uint(id)); found {
				dup = id
				return false
			}
			seen.Set(uint(id))
			return true
		})
	} else {
		all := make([]ID, 0, n)
		each(func(id ID) bool { all = append(all, id); return true })
		dup, found = repeatedID(all)
	}
	if found {
		return fmt.Errorf("fast: load: subscription %d already present", dup)
	}
	return nil
}

// denseCheckFactor: a load's ids below denseCheckFactor times their count
// are checked for repeats in a bitset (at most 8 bits per id, an eighth
// of the 8 bytes per id of a sorted copy).
const denseCheckFactor = 8

// repeatedID returns an id that occurs twice in all, which it sorts.
func repeatedID(all []ID) (ID, bool) {
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			return all[i], true
		}
	}
	return 0, false
}
