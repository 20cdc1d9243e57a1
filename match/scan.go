package match

import (
	"fmt"
	"slices"
)

func init() {
	RegisterIndex(IndexInfo{
		Name:        "scan",
		Description: "reference: tests every filter against every event",
		New:         func() Index { return NewScan() },
	})
}

// Scan is the reference index: it evaluates every filter against every
// event. It is slow and obviously correct; every other index is tested
// against it.
type Scan struct {
	ids     []ID
	filters []Filter
	pos     map[ID]int
}

// NewScan returns an empty Scan.
func NewScan() *Scan { return &Scan{pos: make(map[ID]int)} }

// Insert adds a subscription.
func (s *Scan) Insert(id ID, f Filter) error {
	if _, dup := s.pos[id]; dup {
		return fmt.Errorf("scan: subscription %d already present", id)
	}
	s.pos[id] = len(s.ids)
	s.ids = append(s.ids, id)
	s.filters = append(s.filters, f)
	return nil
}

// Delete removes a subscription, moving the last one into its place.
func (s *Scan) Delete(id ID) error {
	i, ok := s.pos[id]
	if !ok {
		return fmt.Errorf("scan: subscription %d not present", id)
	}
	last := len(s.ids) - 1
	s.ids[i], s.filters[i] = s.ids[last], s.filters[last]
	s.pos[s.ids[i]] = i
	s.ids, s.filters = s.ids[:last], s.filters[:last]
	delete(s.pos, id)
	return nil
}

// Match appends the ids of every matching filter.
func (s *Scan) Match(e Event, dst []ID) []ID {
	for i, f := range s.filters {
		if f.Matches(e) {
			dst = append(dst, s.ids[i])
		}
	}
	return dst
}

// Len returns the number of subscriptions.
func (s *Scan) Len() int { return len(s.ids) }

// Filter returns the filter of a subscription.
func (s *Scan) Filter(id ID) (Filter, bool) {
	i, ok := s.pos[id]
	if !ok {
		return Filter{}, false
	}
	return s.filters[i], true
}

// IDs returns the ids of all subscriptions, ascending.
func (s *Scan) IDs() []ID { return SortIDs(slices.Clone(s.ids)) }
