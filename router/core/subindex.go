package core

import (
	"iter"
	"maps"
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// subIndex maps one interface's subscription ids to index entry ids.
//
// Clients number their subscriptions in order (a batch takes a
// contiguous range), so the ids of a connection are mostly dense: they
// are kept in runs, each a first id and a slice of entry ids (4 bytes a
// subscription, where a map entry costs several times that), and
// only an id that does not extend the last run goes in a map. A run's
// small gaps (at most maxGap ids) are held as holes, so ids skipping a
// few stay dense too.
//
// Memory stays proportional to the live subscriptions whatever ids a
// client uses: a run whose holes outnumber three times its live entries
// moves them to the map (and dies), and dead runs are dropped once they
// outnumber the live ones. Lookups binary-search the runs (a connection
// has few).
type subIndex struct {
	runs   []subRun
	dead   int                 // runs emptied and not dropped yet
	sparse map[uint64]match.ID // ids outside every run
	n      int
}

// subRun holds ids first, first+1, ...: ids[i] is entry first+i's index
// id, 0 for a hole (index id 0 is never used). A dead run has no ids.
type subRun struct {
	first uint64
	ids   []match.ID
	live  int
}

const (
	maxGap        = 8  // ids skipped that still extend the last run
	minShrinkRun  = 64 // runs shorter than this are never moved to the map
	holesPerEntry = 3  // holes per live entry a run may hold
)

func newSubIndex() *subIndex { return &subIndex{sparse: make(map[uint64]match.ID)} }

// Len returns the number of subscriptions.
func (s *subIndex) Len() int { return s.n }

// find returns the run holding sub in its range, if any.
func (s *subIndex) find(sub uint64) (*subRun, bool) {
	i, _ := slices.BinarySearchFunc(s.runs, sub, func(r subRun, id uint64) int {
		switch {
		case id < r.first:
			return 1
		case r.past(id):
			return -1
		}
		return 0
	})
	if i < len(s.runs) && s.runs[i].contains(sub) {
		return &s.runs[i], true
	}
	return nil, false
}

func (r *subRun) contains(sub uint64) bool {
	return sub >= r.first && sub-r.first < uint64(len(r.ids))
}

// past reports whether sub is above r's range (computed without
// first+len, which may overflow).
func (r *subRun) past(sub uint64) bool {
	return sub >= r.first && sub-r.first >= uint64(len(r.ids))
}

// Get returns sub's index id. (A run's hole may be held in the map: a
// run started above a dead run's first id can cover ids moved from it.)
func (s *subIndex) Get(sub uint64) (match.ID, bool) {
	if r, ok := s.find(sub); ok && r.ids[sub-r.first] != 0 {
		return r.ids[sub-r.first], true
	}
	x, ok := s.sparse[sub]
	return x, ok
}

// Put records sub -> x (x != 0); sub must not be held.
func (s *subIndex) Put(sub uint64, x match.ID) {
	s.n++
	if r, ok := s.find(sub); ok { // a hole (sub is not in the map: not held)
		r.ids[sub-r.first] = x
		r.live++
		return
	}
	if k := len(s.runs); k > 0 && len(s.runs[k-1].ids) > 0 {
		last := &s.runs[k-1]
		if gap := sub - last.first - uint64(len(last.ids)); last.past(sub) && gap <= maxGap {
			for range gap {
				last.ids = append(last.ids, 0)
			}
			last.ids = append(last.ids, x)
			last.live++
			return
		}
	}
	if k := len(s.runs); k == 0 || s.runs[k-1].past(sub) {
		// above every run (the last has the largest first id and every
		// other run ends below it): a new run keeps them sorted
		s.runs = append(s.runs, subRun{first: sub, ids: []match.ID{x}, live: 1})
		return
	}
	s.sparse[sub] = x
}

// Delete forgets sub, returning its index id.
func (s *subIndex) Delete(sub uint64) (match.ID, bool) {
	r, ok := s.find(sub)
	if !ok || r.ids[sub-r.first] == 0 {
		x, ok := s.sparse[sub]
		if ok {
			delete(s.sparse, sub)
			s.n--
		}
		return x, ok
	}
	x := r.ids[sub-r.first]
	r.ids[sub-r.first] = 0
	r.live--
	s.n--
	if len(r.ids) >= minShrinkRun && len(r.ids)-r.live > holesPerEntry*r.live || r.live == 0 {
		s.kill(r)
	}
	return x, true
}

// kill moves r's live entries to the map and empties it; dead runs are
// dropped once they outnumber the live ones.
func (s *subIndex) kill(r *subRun) {
	for i, x := range r.ids {
		if x != 0 {
			s.sparse[r.first+uint64(i)] = x
		}
	}
	r.ids, r.live = nil, 0
	if s.dead++; s.dead > len(s.runs)-s.dead {
		s.runs = slices.DeleteFunc(s.runs, func(r subRun) bool { return len(r.ids) == 0 })
		s.dead = 0
	}
}

// All yields every subscription id and its index id, ids ascending.
func (s *subIndex) All() iter.Seq2[uint64, match.ID] {
	return func(yield func(uint64, match.ID) bool) {
		sparse := slices.Sorted(maps.Keys(s.sparse))
		j := 0
		for _, r := range s.runs {
			for i, x := range r.ids {
				if x == 0 {
					continue
				}
				sub := r.first + uint64(i)
				for ; j < len(sparse) && sparse[j] < sub; j++ {
					if !yield(sparse[j], s.sparse[sparse[j]]) {
						return
					}
				}
				if !yield(sub, x) {
					return
				}
			}
		}
		for ; j < len(sparse); j++ {
			if !yield(sparse[j], s.sparse[sparse[j]]) {
				return
			}
		}
	}
}
