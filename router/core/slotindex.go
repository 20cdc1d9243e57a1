package core

import "hash/maphash"

// slotIndex maps a hash to the first pool slot holding a filter of that
// hash (filterPool.byHash): an open-addressing table of slot numbers,
// probed linearly, that reads each slot's hash from the pool's slots
// instead of holding it, at most 2/3 full.
//
// Why not a map[uint64]uint32: the link table's pool has a slot per
// distinct filter a router holds from its links, and the map's 16-byte
// slots in groups sized by powers of two were ~40 bytes per held filter;
// here a slot costs 4 bytes at 1/3 to 2/3 load. The position of a hash is
// a seeded hash of it (maphash), so hashes that a neighbour chose (the
// link table's pool hashes by witness, the hash of a filter's text) do
// not pile up in one run.
type slotIndex struct {
	seed  maphash.Seed
	table []uint32 // slot numbers; 0 is empty (the pool never uses slot 0)
	n     int      // slots held
}

func newSlotIndex() slotIndex { return slotIndex{seed: maphash.MakeSeed()} }

// home returns the position where hash k's probe starts.
func (x *slotIndex) home(k uint64) int {
	return int(maphash.Comparable(x.seed, k) & uint64(len(x.table)-1))
}

// next returns the position after i.
func (x *slotIndex) next(i int) int { return (i + 1) & (len(x.table) - 1) }

// get returns the slot held for hash k, if any.
func (x *slotIndex) get(k uint64, slots []pooledFilter) (uint32, bool) {
	if x.n == 0 {
		return 0, false
	}
	for i := x.home(k); x.table[i] != 0; i = x.next(i) {
		if s := x.table[i]; slots[s].hash == k {
			return s, true
		}
	}
	return 0, false
}

// put holds slot s for its hash, which holds no slot yet.
func (x *slotIndex) put(s uint32, slots []pooledFilter) {
	if (x.n+1)*3 > len(x.table)*2 {
		x.grow(slots)
	}
	i := x.home(slots[s].hash)
	for x.table[i] != 0 {
		i = x.next(i)
	}
	x.table[i] = s
	x.n++
}

// grow doubles the table (8 positions at first) and places every slot
// again.
func (x *slotIndex) grow(slots []pooledFilter) {
	old := x.table
	x.table = make([]uint32, max(8, 2*len(old)))
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := x.home(slots[s].hash)
		for x.table[i] != 0 {
			i = x.next(i)
		}
		x.table[i] = s
	}
}

// remove drops slot s (held for its hash), moving back the slots after
// it in its run that probed past it, so that no probe stops short of a
// slot it must find (deletion without tombstones).
func (x *slotIndex) remove(s uint32, slots []pooledFilter) {
	i := x.home(slots[s].hash)
	for x.table[i] != s {
		i = x.next(i)
	}
	for j := x.next(i); x.table[j] != 0; j = x.next(j) {
		h := x.home(slots[x.table[j]].hash)
		// The slot at j may move to the hole at i when its home is not
		// in the cyclic range (i, j].
		if i <= j && (h <= i || h > j) || i > j && h <= i && h > j {
			x.table[i] = x.table[j]
			i = j
		}
	}
	x.table[i] = 0
	x.n--
}

// len returns the number of slots held.
func (x *slotIndex) len() int { return x.n }
