// Package slots maps subscription ids to dense slot numbers, the
// positions of a subscription in the baseline indexes' arrays and
// bitsets, and reuses freed slots so that the arrays stay as long as the
// most subscriptions ever held at once.
package slots

import (
	"fmt"

	"github.com/sift-pubsub/sift/match"
)

// Table is the id-to-slot map of one index.
type Table struct {
	name string
	ids  []match.ID // by slot; meaningful only for live slots
	live []bool     // by slot
	slot map[match.ID]uint32
	free []uint32
}

// New returns an empty table whose errors name the index.
func New(name string) *Table { return &Table{name: name, slot: make(map[match.ID]uint32)} }

// Has reports whether id is present.
func (t *Table) Has(id match.ID) bool { _, ok := t.slot[id]; return ok }

// CheckNew fails when id is present already.
func (t *Table) CheckNew(id match.ID) error {
	if t.Has(id) {
		return fmt.Errorf("%s: subscription %d already present", t.name, id)
	}
	return nil
}

// Add gives id a slot (a freed one when there is one). The caller has
// checked that id is new.
func (t *Table) Add(id match.ID) uint32 {
	var s uint32
	if n := len(t.free); n > 0 {
		s = t.free[n-1]
		t.free = t.free[:n-1]
		t.ids[s], t.live[s] = id, true
	} else {
		s = uint32(len(t.ids))
		t.ids = append(t.ids, id)
		t.live = append(t.live, true)
	}
	t.slot[id] = s
	return s
}

// Slot returns the slot of id, or an error naming the index when id is
// unknown.
func (t *Table) Slot(id match.ID) (uint32, error) {
	s, ok := t.slot[id]
	if !ok {
		return 0, fmt.Errorf("%s: subscription %d not present", t.name, id)
	}
	return s, nil
}

// Free releases the slot of a present id for reuse.
func (t *Table) Free(id match.ID) {
	s := t.slot[id]
	delete(t.slot, id)
	t.live[s] = false
	t.free = append(t.free, s)
}

// ID returns the id in a live slot.
func (t *Table) ID(s uint32) match.ID { return t.ids[s] }

// Live reports whether slot s holds a subscription.
func (t *Table) Live(s uint32) bool { return t.live[s] }

// Cap returns the number of slots, live or free.
func (t *Table) Cap() int { return len(t.ids) }

// Len returns the number of subscriptions.
func (t *Table) Len() int { return len(t.slot) }

// CheckLoad fails when an id of a bulk load is present or repeated.
func (t *Table) CheckLoad(ids []match.ID, filters []match.Filter) error {
	if len(ids) != len(filters) {
		return fmt.Errorf("%s: load: %d ids for %d filters", t.name, len(ids), len(filters))
	}
	seen := make(map[match.ID]bool, len(ids))
	for _, id := range ids {
		if t.Has(id) || seen[id] {
			return fmt.Errorf("%s: load: subscription %d already present or repeated", t.name, id)
		}
		seen[id] = true
	}
	return nil
}
