package bloom

import (
	"strings"

	"github.com/sift-pubsub/sift/match"
)

// attrNames numbers the attribute names the dictionary's terms and
// qualifiers use, reference-counted, so that a summary looks each event
// attribute up once (eventView) and everything else finds values by
// number.
type attrNames struct {
	ids  map[string]int32
	refs []int32 // by id; 0: free
	free []int32
	gen  uint64 // changes whenever a name gets or loses an id
}

// acquire returns name's id, adding a reference.
func (n *attrNames) acquire(name string) int32 {
	if n.ids == nil {
		n.ids = make(map[string]int32)
	}
	id, ok := n.ids[name]
	if !ok {
		if k := len(n.free); k > 0 {
			id, n.free = n.free[k-1], n.free[:k-1]
		} else {
			id = int32(len(n.refs))
			n.refs = append(n.refs, 0)
		}
		n.ids[name] = id
		n.gen++
	}
	n.refs[id]++
	return id
}

// release drops a reference to name, freeing its id with the last one.
func (n *attrNames) release(name string) {
	id := n.ids[name]
	if n.refs[id]--; n.refs[id] == 0 {
		delete(n.ids, name)
		n.free = append(n.free, id)
		n.gen++
	}
}

// eventView holds one event's values by attribute id: the attributes the
// dictionary knows, looked up once per summary. Events of one publisher
// tend to name the same attributes, so it remembers the last event's
// names and their ids (-1: unknown) and compares before looking up.
type eventView struct {
	vals  []match.Value
	stamp []uint32 // stamp[id] == epoch: vals[id] is the event's
	epoch uint32
	ids   []int32 // the event's known attributes, in event order

	lastNames []string
	lastIDs   []int32
	lastGen   uint64 // attrNames.gen when lastIDs were looked up
}

// load makes the view hold e's values.
func (v *eventView) load(e match.Event, names *attrNames) {
	if len(v.stamp) < len(names.refs) {
		v.vals = make([]match.Value, len(names.refs))
		v.stamp = make([]uint32, len(names.refs))
		v.epoch = 0
	}
	if v.epoch++; v.epoch == 0 { // wrapped: old stamps could collide
		clear(v.stamp)
		v.epoch = 1
	}
	v.ids = v.ids[:0]
	if names.gen != v.lastGen || len(v.lastNames) != e.Len() {
		v.lastGen = names.gen
		v.lastNames, v.lastIDs = v.lastNames[:0], v.lastIDs[:0]
		for range e.Len() {
			v.lastNames = append(v.lastNames, "")
			v.lastIDs = append(v.lastIDs, -1)
		}
	}
	for i := range e.Len() {
		a := e.At(i)
		id := v.lastIDs[i]
		if a.Name != v.lastNames[i] {
			id = -1
			if known, ok := names.ids[a.Name]; ok {
				id = known
			}
			// A copy: the event's memory may be a reader's, reused later.
			v.lastNames[i], v.lastIDs[i] = strings.Clone(a.Name), id
		}
		if id >= 0 {
			v.vals[id] = a.Value
			v.stamp[id] = v.epoch
			v.ids = append(v.ids, id)
		}
	}
}

// get returns the event's value of attribute id, if it has one.
func (v *eventView) get(id int32) (match.Value, bool) {
	if v.stamp[id] != v.epoch {
		return match.Value{}, false
	}
	return v.vals[id], true
}
