package match

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// ID identifies a subscription inside an index.
type ID uint64

// Index is a set of subscriptions (id and filter) that finds the ones an
// event matches. Every implementation returns exactly what Scan returns.
// Indexes are not safe for concurrent use; callers serialise access.
type Index interface {
	// Insert adds a subscription. It fails, changing nothing, when the id is
	// already present.
	Insert(id ID, f Filter) error
	// Delete removes a subscription. It fails, changing nothing, when the id
	// is unknown.
	Delete(id ID) error
	// Match appends to dst the ids of the subscriptions whose filter matches
	// e, each once, in no particular order, and returns the extended slice.
	Match(e Event, dst []ID) []ID
	// Len returns the number of subscriptions.
	Len() int
}

// BulkLoader is implemented by indexes that build faster from many
// subscriptions at once than by repeated Insert.
type BulkLoader interface {
	// Load inserts every (ids[i], filters[i]); like Insert, it fails without
	// change if an id is present already or repeated.
	Load(ids []ID, filters []Filter) error
}

// Load inserts the subscriptions into idx, in bulk when idx supports it.
func Load(idx Index, ids []ID, filters []Filter) error {
	if len(ids) != len(filters) {
		return fmt.Errorf("load: %d ids for %d filters", len(ids), len(filters))
	}
	if bl, ok := idx.(BulkLoader); ok {
		return bl.Load(ids, filters)
	}
	for i, id := range ids {
		if err := idx.Insert(id, filters[i]); err != nil {
			return fmt.Errorf("load subscription %d: %w", id, err)
		}
	}
	return nil
}

// BatchMatcher is implemented by indexes that match several events in one
// call for less than one Match each: Parallel hands the whole batch to
// every core at once instead of one handoff per event.
type BatchMatcher interface {
	// MatchBatch appends to dsts[i] the ids Match would append for evs[i],
	// for every i, growing dsts to len(evs) entries first; it returns
	// dsts[:len(evs)].
	MatchBatch(evs []Event, dsts [][]ID) [][]ID
}

// MatchBatch matches every event of evs against idx, in one batch when idx
// is a BatchMatcher and one by one otherwise; see BatchMatcher.
func MatchBatch(idx Index, evs []Event, dsts [][]ID) [][]ID {
	if bm, ok := idx.(BatchMatcher); ok {
		return bm.MatchBatch(evs, dsts)
	}
	dsts = growBatch(dsts, len(evs))
	for i, e := range evs {
		dsts[i] = idx.Match(e, dsts[i])
	}
	return dsts
}

// growBatch returns dsts with at least n entries, cut to n.
func growBatch(dsts [][]ID, n int) [][]ID {
	if len(dsts) < n {
		dsts = append(dsts, make([][]ID, n-len(dsts))...)
	}
	return dsts[:n]
}

// IndexInfo describes a registered index implementation.
type IndexInfo struct {
	// Name selects the index, e.g. in `sift match --index NAME`.
	Name string
	// Description is one line for listings.
	Description string
	// New returns an empty index with default settings.
	New func() Index
}

var registry = struct {
	sync.Mutex
	byName map[string]IndexInfo
}{byName: make(map[string]IndexInfo)}

// RegisterIndex makes an index implementation available by name. Packages
// register their indexes in an init function; registering a name twice
// panics.
func RegisterIndex(info IndexInfo) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.byName[info.Name]; dup {
		panic("match: index " + info.Name + " registered twice")
	}
	registry.byName[info.Name] = info
}

// Indexes returns every registered index, sorted by name.
func Indexes() []IndexInfo {
	registry.Lock()
	defer registry.Unlock()
	infos := make([]IndexInfo, 0, len(registry.byName))
	for _, info := range registry.byName {
		infos = append(infos, info)
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	return infos
}

// IndexNames returns the names of the registered indexes, sorted.
func IndexNames() []string {
	var names []string
	for _, info := range Indexes() {
		names = append(names, info.Name)
	}
	return names
}

// NewIndex returns a new empty index of the named implementation; an
// unknown name is an error listing the valid ones.
func NewIndex(name string) (Index, error) {
	registry.Lock()
	info, ok := registry.byName[name]
	registry.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown index %q (valid: %s)", name, strings.Join(IndexNames(), ", "))
	}
	return info.New(), nil
}

// SortIDs sorts ids ascending in place and returns them.
func SortIDs(ids []ID) []ID {
	slices.Sort(ids)
	return ids
}

// RawMatcher is implemented by approximate indexes (the Bloom-filter trees)
// that can return their candidates before the exact re-check: a superset of
// the exact matches, never missing one.
type RawMatcher interface {
	// MatchRaw appends the candidate ids for e to dst.
	MatchRaw(e Event, dst []ID) []ID
}

// StatsReporter is implemented by indexes with counters worth reporting
// after a run, such as candidates, exact matches and false positives.
type StatsReporter interface {
	// Stats returns one human-readable summary line.
	Stats() string
}

// Compacter is implemented by indexes that can reorganise themselves into
// their fastest shape on demand (Fast merges its segments); a router may
// call Compact when idle.
type Compacter interface {
	Compact()
}
