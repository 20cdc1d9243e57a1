// Package memstore is a deterministic in-memory durable.Store for tests and
// the simulator. It models synced and unsynced writes itself: applied
// batches stay unsynced until a synced Apply or Sync, and Crash keeps the
// synced state plus a seeded random prefix of the unsynced batches (a lost
// batch takes every later one with it, as a write-ahead log would).
//
// It is not safe for concurrent use.
package memstore

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/sift-pubsub/sift/durable"
)

// Store is the in-memory store.
type Store struct {
	data     map[string][]byte // every applied write (what reads see)
	synced   map[string][]byte // the durable state
	unsynced []*durable.Batch  // applied since the last sync, in order
	syncs    int
}

// New returns an empty store.
func New() *Store {
	return &Store{data: map[string][]byte{}, synced: map[string][]byte{}}
}

// Get implements durable.Store.
func (s *Store) Get(key []byte) ([]byte, bool, error) {
	v, ok := s.data[string(key)]
	return v, ok, nil
}

// Scan implements durable.Store.
func (s *Store) Scan(lo, hi []byte, fn func(key, val []byte) bool) error {
	keys := make([]string, 0)
	for k := range s.data {
		if k >= string(lo) && (hi == nil || k < string(hi)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !fn([]byte(k), s.data[k]) {
			return nil
		}
	}
	return nil
}

// Apply implements durable.Store.
func (s *Store) Apply(b *durable.Batch, sync bool) error {
	apply(s.data, b)
	s.unsynced = append(s.unsynced, b)
	if sync {
		s.Sync()
	}
	return nil
}

// Sync makes every applied batch durable.
func (s *Store) Sync() { s.SyncN(len(s.unsynced)) }

// SyncN makes the first n unsynced batches durable (a sync that started
// before the later ones were applied).
func (s *Store) SyncN(n int) {
	n = min(n, len(s.unsynced))
	for _, b := range s.unsynced[:n] {
		apply(s.synced, b)
	}
	s.unsynced = s.unsynced[n:]
	s.syncs++
}

// Syncs returns how many syncs were made.
func (s *Store) Syncs() int { return s.syncs }

// Unsynced returns the number of batches applied but not yet synced.
func (s *Store) Unsynced() int { return len(s.unsynced) }

// Crash simulates a power failure: the synced state survives, plus a random
// prefix (chosen with rng) of the unsynced batches, whose length it returns.
func (s *Store) Crash(rng *rand.Rand) (kept int) {
	keep := 0
	if n := len(s.unsynced); n > 0 {
		keep = rng.IntN(n + 1)
	}
	for _, b := range s.unsynced[:keep] {
		apply(s.synced, b)
	}
	s.unsynced = nil
	s.data = clone(s.synced)
	return keep
}

// Keys returns every key with the prefix, sorted (for checks).
func (s *Store) Keys(prefix []byte) [][]byte {
	var ks [][]byte
	for k := range s.data {
		if bytes.HasPrefix([]byte(k), prefix) {
			ks = append(ks, []byte(k))
		}
	}
	slices.SortFunc(ks, bytes.Compare)
	return ks
}

// Len returns the number of keys.
func (s *Store) Len() int { return len(s.data) }

func apply(m map[string][]byte, b *durable.Batch) {
	for _, op := range b.Ops {
		switch op.Kind {
		case durable.OpSet:
			m[string(op.Key)] = bytes.Clone(op.Value)
		case durable.OpDelete:
			delete(m, string(op.Key))
		case durable.OpDeleteRange:
			for k := range m {
				if k >= string(op.Key) && k < string(op.End) {
					delete(m, k)
				}
			}
		}
	}
}

func clone(m map[string][]byte) map[string][]byte {
	c := make(map[string][]byte, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
