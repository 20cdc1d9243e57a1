package bloom

import "github.com/sift-pubsub/sift/match"

// attrNames numbers the attribute names the dictionary's terms and
// qualifiers use, reference-counted, so that a summary looks each event
// attribute up once (eventView) and everything else finds values by
// number.
type attrNames struct {
	ids  map[string]int32
	refs []int32 // by id; 0: free
	free []int32
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
	}
}

// eventView holds one event's values by attribute id: the attributes the
// dictionary knows, looked up once per summary.
type eventView struct {
	vals  []match.Value
	stamp []uint32 // stamp[id] == epoch: vals[id] is the event's
	epoch uint32
	ids   []int32 // the event's known attributes, in event order
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
	for i := range e.Len() {
		a := e.At(i)
		if id, ok := names.ids[a.Name]; ok {
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
