package memstore

import (
	"math/rand/v2"
	"testing"

	"github.com/sift-pubsub/sift/durable"
)

func set(k, v string) *durable.Batch {
	b := &durable.Batch{}
	b.Set([]byte(k), []byte(v))
	return b
}

// TestCrashKeepsSyncedAndAPrefix checks that a crash keeps every synced
// batch and a prefix of the unsynced ones, never a later batch without an
// earlier one.
func TestCrashKeepsSyncedAndAPrefix(t *testing.T) {
	for seed := range uint64(50) {
		s := New()
		_ = s.Apply(set("a", "1"), true)
		_ = s.Apply(set("b", "1"), false)
		_ = s.Apply(set("c", "1"), false)
		del := &durable.Batch{}
		del.DeleteRange([]byte("a"), []byte("b"))
		_ = s.Apply(del, false)
		s.Crash(rand.New(rand.NewPCG(seed, 1)))
		_, a, _ := s.Get([]byte("a"))
		_, b, _ := s.Get([]byte("b"))
		_, c, _ := s.Get([]byte("c"))
		switch {
		case c && !b:
			t.Fatalf("seed %d: batch c survived without the earlier b", seed)
		case !a && !c:
			t.Fatalf("seed %d: the range delete survived without batch c", seed)
		case !a && !(b && c):
			t.Fatalf("seed %d: synced key a lost", seed)
		}
	}
}

// TestScanOrderAndBounds checks Scan's order and half-open bounds.
func TestScanOrderAndBounds(t *testing.T) {
	s := New()
	for _, k := range []string{"c", "a", "b", "d"} {
		_ = s.Apply(set(k, k), false)
	}
	var got string
	_ = s.Scan([]byte("b"), []byte("d"), func(k, v []byte) bool {
		got += string(k)
		return true
	})
	if got != "bc" {
		t.Fatalf("scan [b,d) = %q, want bc", got)
	}
}
