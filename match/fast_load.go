package match

import (
	"errors"
	"fmt"
	"slices"
)

// fastLoader bulk-loads a Fast index: every filter goes straight into one
// segment builder, which keeps the filter's bounds and slots in the
// compact lists the build sorts into the segment, never the filter itself.
// A load of n HEM-shaped filters thus holds about as much as the segment
// it builds, whatever the size of the filters it was given.
type fastLoader struct {
	x     *Fast
	b     *segBuilder
	built []*segment // full segments, adopted at Finish
	never []ID       // unsatisfiable filters, stored nowhere
	done  bool
}

// NewLoader returns a loader that builds one segment of every
// subscription it is given (see Loader).
func (x *Fast) NewLoader() Loader { return &fastLoader{x: x, b: newSegBuilder()} }

var errLoaderDone = errors.New("fast: load: loader already finished")

func (l *fastLoader) Add(id ID, f Filter) error {
	if l.done {
		return errLoaderDone
	}
	if _, dup := l.x.loc.get(id); dup {
		return fmt.Errorf("fast: load: subscription %d already present", id)
	}
	sets, empty := filterSets(f)
	if empty {
		l.never = append(l.never, id)
		return nil
	}
	l.b.addFilter(id, f, sets)
	if len(l.b.ids) >= l.x.cfg.SegmentSlots {
		l.built = append(l.built, l.b.build(&l.x.cfg))
		l.b = newSegBuilder()
	}
	return nil
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
		l.x.loc.set(id, loc(0, neverSlot))
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

// check reports a repeated id, which Finish would fail on.
func (l *fastLoader) check() error {
	if l.done {
		return errLoaderDone
	}
	ids := slices.Concat(l.b.ids, l.never)
	for _, s := range l.built {
		for slot := range s.n {
			ids = append(ids, s.id(slot))
		}
	}
	if id, ok := repeatedID(ids); ok {
		return fmt.Errorf("fast: load: subscription %d already present", id)
	}
	return nil
}

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
