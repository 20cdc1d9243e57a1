package sim

import (
	"container/heap"

	"github.com/sift-pubsub/sift/durable"
)

// item is a scheduled happening: a message delivery or an action.
type item struct {
	at  durable.Tick
	seq uint64 // tie-break: scheduling order, for determinism
	env *durable.Envelope
	fn  func()
}

// queue is a min-heap of items by (at, seq).
type queue struct {
	items []*item
	seq   uint64
}

func (q *queue) Len() int { return len(q.items) }
func (q *queue) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}
func (q *queue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *queue) Push(x any)    { q.items = append(q.items, x.(*item)) }
func (q *queue) Pop() any {
	it := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return it
}

func (q *queue) add(it *item) {
	q.seq++
	it.seq = q.seq
	heap.Push(q, it)
}

func (q *queue) next() *item { return heap.Pop(q).(*item) }
