package match

import "sync"

// locTable maps subscription ids to packed locations (segment number << 32
// | slot). Ids below a bound that grows with the table live in a slice, so
// the common case of dense ids costs 8 bytes per subscription; other ids
// live in a map. A Parallel's shards share one table (their ids are
// disjoint); mu serialises the writes of shards built at once (adopt,
// setNever), the only ones that run beside each other.
type locTable struct {
	mu     sync.Mutex
	dense  []uint64 // location+1 by id; 0 means absent
	sparse map[ID]uint64
	n      int
}

// get returns the location of id.
func (t *locTable) get(id ID) (uint64, bool) {
	if id < ID(len(t.dense)) {
		l := t.dense[id]
		return l - 1, l != 0
	}
	l, ok := t.sparse[id]
	return l, ok
}

// set records the location of id, which may be new.
func (t *locTable) set(id ID, l uint64) {
	if _, ok := t.get(id); !ok {
		t.n++
	}
	if id >= ID(len(t.dense)) && id < ID(2*t.n+1024) {
		t.grow(id)
	}
	if id < ID(len(t.dense)) {
		t.dense[id] = l + 1
		return
	}
	if t.sparse == nil {
		t.sparse = make(map[ID]uint64)
	}
	t.sparse[id] = l
}

// reserve makes room in the dense slice, at once, for ids up to maxID of
// which adding are new, when they will be dense enough to live there: a
// bulk load then allocates the slice once at its size instead of doubling
// it (at 10^7 ids, 80 MB instead of up to 134 MB plus the copies).
func (t *locTable) reserve(maxID ID, adding int) {
	if maxID >= ID(len(t.dense)) && maxID < ID(2*(t.n+adding)+1024) {
		t.resize(int(maxID) + 1)
	}
}

// grow extends the dense slice to hold id, moving map entries it now covers.
func (t *locTable) grow(id ID) { t.resize(max(int(id)+1, 2*len(t.dense))) }

// resize sets the dense slice's length to size (at least its length),
// moving map entries it now covers.
func (t *locTable) resize(size int) {
	d := make([]uint64, size)
	copy(d, t.dense)
	t.dense = d
	for k, l := range t.sparse {
		if k < ID(size) {
			t.dense[k] = l + 1
			delete(t.sparse, k)
		}
	}
}

// remove forgets id.
func (t *locTable) remove(id ID) {
	if _, ok := t.get(id); !ok {
		return
	}
	t.n--
	if id < ID(len(t.dense)) {
		t.dense[id] = 0
		return
	}
	delete(t.sparse, id)
}
