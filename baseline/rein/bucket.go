package rein

import (
	"sort"

	"github.com/sift-pubsub/sift/baseline/internal/num"
)

// bucket holds the interval ends (value, open, slot) of one bucket of one
// attribute, sorted by value when not dirty.
type bucket struct {
	keys  []num.Key
	open  []bool
	slots []uint32
	dirty bool
}

func (b *bucket) add(k num.Key, open bool, s uint32) {
	b.keys = append(b.keys, k)
	b.open = append(b.open, open)
	b.slots = append(b.slots, s)
	b.dirty = true
}

func (b *bucket) remove(k num.Key, s uint32) bool {
	for i := range b.slots {
		if b.slots[i] == s && b.keys[i] == k {
			b.keys = append(b.keys[:i], b.keys[i+1:]...)
			b.open = append(b.open[:i], b.open[i+1:]...)
			b.slots = append(b.slots[:i], b.slots[i+1:]...)
			return true
		}
	}
	return false
}

func (b *bucket) settle() {
	if b.dirty {
		sort.Sort(b)
		b.dirty = false
	}
}

func (b *bucket) Len() int           { return len(b.keys) }
func (b *bucket) Less(i, j int) bool { return num.Less(b.keys[i], b.keys[j]) }
func (b *bucket) Swap(i, j int) {
	b.keys[i], b.keys[j] = b.keys[j], b.keys[i]
	b.open[i], b.open[j] = b.open[j], b.open[i]
	b.slots[i], b.slots[j] = b.slots[j], b.slots[i]
}

// markAll sets the bit of every slot in the bucket.
func (b *bucket) markAll(marks []uint64) {
	for _, s := range b.slots {
		marks[s>>6] |= 1 << (s & 63)
	}
}

// markLowsAbove marks the low ends that v fails: values above v, and
// open ends equal to v.
func (b *bucket) markLowsAbove(v num.Key, marks []uint64) {
	b.settle()
	i := sort.Search(len(b.keys), func(i int) bool { return !num.Less(b.keys[i], v) })
	for ; i < len(b.keys); i++ {
		if b.keys[i] == v && !b.open[i] {
			continue
		}
		s := b.slots[i]
		marks[s>>6] |= 1 << (s & 63)
	}
}

// markHighsBelow marks the high ends that v fails: values below v, and
// open ends equal to v.
func (b *bucket) markHighsBelow(v num.Key, marks []uint64) {
	b.settle()
	end := sort.Search(len(b.keys), func(i int) bool { return num.Less(v, b.keys[i]) })
	for i := range end {
		if b.keys[i] == v && !b.open[i] {
			continue
		}
		s := b.slots[i]
		marks[s>>6] |= 1 << (s & 63)
	}
}
