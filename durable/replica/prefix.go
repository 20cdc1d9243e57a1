package replica

import (
	"bytes"

	"github.com/sift-pubsub/sift/durable"
)

// prefixStore shows the keys of a store under a prefix as a store of their
// own (the prefix stripped): the pubend's state table, in which a
// durable.Pubend finds exactly the keys it would find in a store of its own.
type prefixStore struct {
	base durable.Store
	pre  []byte
}

func (s prefixStore) key(k []byte) []byte {
	return append(append(make([]byte, 0, len(s.pre)+len(k)), s.pre...), k...)
}

func (s prefixStore) Get(key []byte) ([]byte, bool, error) { return s.base.Get(s.key(key)) }

func (s prefixStore) Scan(lo, hi []byte, fn func(key, val []byte) bool) error {
	end := prefixEnd(s.pre)
	if hi != nil {
		end = s.key(hi)
	}
	return s.base.Scan(s.key(lo), end, func(k, v []byte) bool {
		return fn(bytes.TrimPrefix(k, s.pre), v)
	})
}

func (s prefixStore) Apply(b *durable.Batch, sync bool) error {
	return s.base.Apply(s.prefixed(b), sync)
}

// prefixed returns b with every key under the prefix.
func (s prefixStore) prefixed(b *durable.Batch) *durable.Batch {
	return &durable.Batch{Ops: s.appendPrefixed(make([]durable.Op, 0, len(b.Ops)), b.Ops)}
}

// appendPrefixed appends ops to dst with the prefix put before their keys,
// growing dst once and allocating the prefixed keys in one piece: an
// applied proposal's ops go straight into the batch.
func (s prefixStore) appendPrefixed(dst, ops []durable.Op) []durable.Op {
	if cap(dst)-len(dst) < len(ops) {
		// One allocation (slices.Grow makes two under the race detector).
		grown := make([]durable.Op, len(dst), len(dst)+len(ops))
		copy(grown, dst)
		dst = grown
	}
	n := 0
	for _, op := range ops {
		n += len(s.pre) + len(op.Key)
		if op.Kind == durable.OpDeleteRange && op.End != nil {
			n += len(s.pre) + len(op.End)
		}
	}
	keys := make([]byte, 0, n)
	for _, op := range ops {
		keys, op.Key = s.appendKey(keys, op.Key)
		if op.Kind == durable.OpDeleteRange {
			if op.End == nil {
				op.End = prefixEnd(s.pre)
			} else {
				keys, op.End = s.appendKey(keys, op.End)
			}
		}
		dst = append(dst, op)
	}
	return dst
}

// appendKey appends k under the prefix to keys, which has room for it,
// and returns keys and the prefixed key (a slice of keys that an append
// cannot overwrite).
func (s prefixStore) appendKey(keys, k []byte) ([]byte, []byte) {
	start := len(keys)
	keys = append(append(keys, s.pre...), k...)
	return keys, keys[start:len(keys):len(keys)]
}
