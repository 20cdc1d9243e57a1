package preds

import "sort"

// sorted holds (key, slot) pairs ordered by key, so that the predicates
// an event value satisfies are one prefix or suffix of the slots. Added
// pairs are appended and sorted in before the next search.
type sorted[K any] struct {
	keys  []K
	slots []uint32
	dirty bool
	less  func(a, b K) bool
}

func (l *sorted[K]) add(k K, s uint32) {
	l.keys = append(l.keys, k)
	l.slots = append(l.slots, s)
	l.dirty = true
}

// remove deletes the pair (k, s); it reports whether it was there.
func (l *sorted[K]) remove(k K, s uint32) bool {
	l.settle()
	for i := l.lowerBound(k); i < len(l.keys) && !l.less(k, l.keys[i]); i++ {
		if l.slots[i] == s {
			l.keys = append(l.keys[:i], l.keys[i+1:]...)
			l.slots = append(l.slots[:i], l.slots[i+1:]...)
			return true
		}
	}
	return false
}

// settle sorts the pairs if any were added since the last sort.
func (l *sorted[K]) settle() {
	if l.dirty {
		sort.Sort(byKey[K]{l})
		l.dirty = false
	}
}

// lowerBound returns the first position whose key is not below k.
func (l *sorted[K]) lowerBound(k K) int {
	return sort.Search(len(l.keys), func(i int) bool { return !l.less(l.keys[i], k) })
}

// upperBound returns the first position whose key is above k.
func (l *sorted[K]) upperBound(k K) int {
	return sort.Search(len(l.keys), func(i int) bool { return l.less(k, l.keys[i]) })
}

type byKey[K any] struct{ l *sorted[K] }

func (b byKey[K]) Len() int           { return len(b.l.keys) }
func (b byKey[K]) Less(i, j int) bool { return b.l.less(b.l.keys[i], b.l.keys[j]) }
func (b byKey[K]) Swap(i, j int) {
	b.l.keys[i], b.l.keys[j] = b.l.keys[j], b.l.keys[i]
	b.l.slots[i], b.l.slots[j] = b.l.slots[j], b.l.slots[i]
}
