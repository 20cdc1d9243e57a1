package durable

import (
	"bytes"
	"slices"
)

// Store returns base as the brokers of h must read it: through the
// writes of a batch that failed before it reached base (Fail with applied
// false: a full disk refused it), so that while the batch waits for a
// retry a broker still reads what it wrote (a PFS record, a registry
// entry) instead of an older state. Writes go to base. Brokers are
// created with this store: NewHost() first, the brokers, then SetBrokers.
func (h *Host) Store(base Store) Store { return &hostStore{base: base, h: h} }

type hostStore struct {
	base Store
	h    *Host
}

// pending returns the batch base lacks, or nil.
func (s *hostStore) pending() *Batch {
	if h := s.h; h.failed && !h.applied && h.inFlight != nil {
		return &h.inFlight.Writes
	}
	return nil
}

func (s *hostStore) Get(key []byte) ([]byte, bool, error) {
	if b := s.pending(); b != nil {
		for i := len(b.Ops) - 1; i >= 0; i-- {
			op := b.Ops[i]
			switch {
			case op.Kind == OpSet && bytes.Equal(op.Key, key):
				return op.Value, true, nil
			case op.Kind == OpDelete && bytes.Equal(op.Key, key),
				op.Kind == OpDeleteRange && bytes.Compare(key, op.Key) >= 0 && bytes.Compare(key, op.End) < 0:
				return nil, false, nil
			}
		}
	}
	return s.base.Get(key)
}

// Scan merges the failed batch's writes in [lo, hi) over base's keys
// (rare: only while a store refuses writes, so a copy of the range is
// fine).
func (s *hostStore) Scan(lo, hi []byte, fn func(key, val []byte) bool) error {
	b := s.pending()
	if b == nil {
		return s.base.Scan(lo, hi, fn)
	}
	kv := map[string][]byte{}
	if err := s.base.Scan(lo, hi, func(k, v []byte) bool {
		kv[string(k)] = bytes.Clone(v)
		return true
	}); err != nil {
		return err
	}
	in := func(k []byte) bool {
		return bytes.Compare(k, lo) >= 0 && (hi == nil || bytes.Compare(k, hi) < 0)
	}
	for _, op := range b.Ops {
		switch op.Kind {
		case OpSet:
			if in(op.Key) {
				kv[string(op.Key)] = op.Value
			}
		case OpDelete:
			delete(kv, string(op.Key))
		case OpDeleteRange:
			for k := range kv {
				if k >= string(op.Key) && k < string(op.End) {
					delete(kv, k)
				}
			}
		}
	}
	keys := slices.Sorted(mapKeys(kv))
	for _, k := range keys {
		if !fn([]byte(k), kv[k]) {
			return nil
		}
	}
	return nil
}

func (s *hostStore) Apply(b *Batch, sync bool) error { return s.base.Apply(b, sync) }
