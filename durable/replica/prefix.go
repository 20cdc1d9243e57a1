package replica

import (
	"bytes"
	"slices"

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
// growing dst once: an applied proposal's ops go straight into the batch.
func (s prefixStore) appendPrefixed(dst, ops []durable.Op) []durable.Op {
	dst = slices.Grow(dst, len(ops))
	for _, op := range ops {
		op.Key = s.key(op.Key)
		if op.Kind == durable.OpDeleteRange {
			if op.End == nil {
				op.End = prefixEnd(s.pre)
			} else {
				op.End = s.key(op.End)
			}
		}
		dst = append(dst, op)
	}
	return dst
}
