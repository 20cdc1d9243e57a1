package replica

import (
	"bytes"
	"slices"

	"github.com/sift-pubsub/sift/durable"
)

// overlay is the store the leader's pubend reads: the committed state
// with the batches it proposed and that have not been applied yet on top,
// in proposal order. It reads like the store those batches would make
// once applied.
type overlay struct {
	base    durable.Store
	pending []*durable.Batch
}

// push adds a proposed batch on top.
func (o *overlay) push(b *durable.Batch) { o.pending = append(o.pending, b) }

// pop removes the oldest proposed batch (it was applied to base).
func (o *overlay) pop() { o.pending = o.pending[1:] }

// Get reads key from the newest batch that wrote it, else from base.
func (o *overlay) Get(key []byte) ([]byte, bool, error) {
	for i := len(o.pending) - 1; i >= 0; i-- {
		ops := o.pending[i].Ops
		for j := len(ops) - 1; j >= 0; j-- {
			op := ops[j]
			switch op.Kind {
			case durable.OpSet:
				if bytes.Equal(op.Key, key) {
					return op.Value, true, nil
				}
			case durable.OpDelete:
				if bytes.Equal(op.Key, key) {
					return nil, false, nil
				}
			case durable.OpDeleteRange:
				if inRange(key, op.Key, op.End) {
					return nil, false, nil
				}
			}
		}
	}
	return o.base.Get(key)
}

func inRange(k, lo, hi []byte) bool {
	return bytes.Compare(k, lo) >= 0 && (hi == nil || bytes.Compare(k, hi) < 0)
}

// view is the net effect of the pending batches on [lo, hi): the keys
// they set or deleted, and the ranges they deleted from base.
type view struct {
	keys   []string
	vals   map[string]written
	ranges [][2][]byte
}

// written is a key's last write in the pending batches.
type written struct {
	val     []byte
	deleted bool
}

func (o *overlay) view(lo, hi []byte) view {
	v := view{vals: map[string]written{}}
	for _, b := range o.pending {
		for _, op := range b.Ops {
			switch op.Kind {
			case durable.OpSet, durable.OpDelete:
				if inRange(op.Key, lo, hi) {
					v.vals[string(op.Key)] = written{val: op.Value, deleted: op.Kind == durable.OpDelete}
				}
			case durable.OpDeleteRange:
				for k := range v.vals {
					if inRange([]byte(k), op.Key, op.End) {
						v.vals[k] = written{deleted: true}
					}
				}
				v.ranges = append(v.ranges, [2][]byte{op.Key, op.End})
			}
		}
	}
	v.keys = slices.Sorted(mapKeys(v.vals))
	return v
}

func (v view) hidden(k []byte) bool {
	for _, r := range v.ranges {
		if inRange(k, r[0], r[1]) {
			return true
		}
	}
	return false
}

// Scan merges base with the pending batches, in key order.
func (o *overlay) Scan(lo, hi []byte, fn func(key, val []byte) bool) error {
	if len(o.pending) == 0 {
		return o.base.Scan(lo, hi, fn)
	}
	v := o.view(lo, hi)
	next := 0 // v.keys[next:] are not yet emitted
	stopped := false
	emitBelow := func(k []byte) bool {
		for next < len(v.keys) && (k == nil || v.keys[next] < string(k)) {
			key := v.keys[next]
			next++
			if w := v.vals[key]; !w.deleted && !fn([]byte(key), w.val) {
				return false
			}
		}
		return true
	}
	err := o.base.Scan(lo, hi, func(k, val []byte) bool {
		if !emitBelow(k) {
			stopped = true
			return false
		}
		if next < len(v.keys) && v.keys[next] == string(k) {
			key := v.keys[next]
			next++
			if w := v.vals[key]; !w.deleted && !fn(k, w.val) {
				stopped = true
				return false
			}
			return true
		}
		if v.hidden(k) {
			return true
		}
		if !fn(k, val) {
			stopped = true
			return false
		}
		return true
	})
	if err != nil || stopped {
		return err
	}
	emitBelow(nil)
	return nil
}

// Apply is not used: the pubend's writes go through Raft.
func (o *overlay) Apply(*durable.Batch, bool) error {
	return errApplyOverlay
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
