package durable

import (
	"bytes"
	"slices"
)

// mapStore is a minimal Store for this package's tests (the simulator's
// store with crash modelling is durable/memstore).
type mapStore struct{ m map[string][]byte }

func newMapStore() *mapStore { return &mapStore{m: map[string][]byte{}} }

func (s *mapStore) Get(key []byte) ([]byte, bool, error) {
	v, ok := s.m[string(key)]
	return v, ok, nil
}

func (s *mapStore) Scan(lo, hi []byte, fn func(key, val []byte) bool) error {
	var ks []string
	for k := range s.m {
		if k >= string(lo) && k < string(hi) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	for _, k := range ks {
		if !fn([]byte(k), s.m[k]) {
			break
		}
	}
	return nil
}

func (s *mapStore) Apply(b *Batch, sync bool) error {
	for _, op := range b.Ops {
		switch op.Kind {
		case OpSet:
			s.m[string(op.Key)] = bytes.Clone(op.Value)
		case OpDelete:
			delete(s.m, string(op.Key))
		case OpDeleteRange:
			for k := range s.m {
				if k >= string(op.Key) && k < string(op.End) {
					delete(s.m, k)
				}
			}
		}
	}
	return nil
}
