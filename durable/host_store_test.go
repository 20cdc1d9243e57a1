package durable

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHostFailedBatchReads: while a batch the store refused waits for its
// retry, the host's store reads as if it had been applied (Get and Scan,
// with sets, deletes and range deletions), against a store that did apply
// it; once applied (or synced) reads go to the store alone. Take returns
// nothing while it fails, Failing says why, and Retry hands the batch back.
func TestHostFailedBatchReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() []byte { return fmt.Appendf(nil, "k%02d", rng.IntN(40)) }
	for round := range 200 {
		base, want := newMapStore(), newMapStore()
		var seed Batch
		for range 20 {
			k := key()
			seed.Set(k, k)
		}
		base.Apply(&seed, true)
		want.Apply(&seed, true)
		var b Batch
		for range 1 + rng.IntN(12) {
			switch rng.IntN(4) {
			case 0, 1:
				b.Set(key(), fmt.Appendf(nil, "v%d", rng.IntN(100)))
			case 2:
				b.Delete(key())
			case 3:
				lo, hi := key(), key()
				if string(lo) > string(hi) {
					lo, hi = hi, lo
				}
				b.DeleteRange(lo, hi)
			}
		}
		want.Apply(&b, true)
		h := NewHost()
		st := h.Store(base)
		h.SetBrokers(&fakeBroker{readies: []Ready{{Writes: &b, Msgs: []Envelope{msg("x")}}}})
		hb, _ := h.Take()
		h.Fail(false, fmt.Errorf("no space"))
		if h.Failing() == nil {
			t.Fatal("not failing")
		}
		if again, now := h.Take(); again != nil || now != nil {
			t.Fatal("taken while failing")
		}
		if rb, applied := h.Retry(); rb != hb || applied {
			t.Fatalf("retry: %v %v", rb, applied)
		}
		if got, exp := dump(t, st), dump(t, want); got != exp {
			t.Fatalf("round %d: reads while failing:\n got %s\nwant %s", round, got, exp)
		}
		for range 10 {
			k := key()
			v1, ok1, _ := st.Get(k)
			v2, ok2, _ := want.Get(k)
			if ok1 != ok2 || string(v1) != string(v2) {
				t.Fatalf("round %d: Get(%s) = %q %v, want %q %v", round, k, v1, ok1, v2, ok2)
			}
		}
		h.Applied()
		if got, exp := dump(t, st), dump(t, base); got != exp {
			t.Fatalf("round %d: reads once applied must be the store's", round)
		}
		if msgs := h.Synced(); len(msgs) != 1 || h.Failing() != nil {
			t.Fatalf("synced: %v, failing %v", msgs, h.Failing())
		}
	}
}

func dump(t *testing.T, st Store) string {
	t.Helper()
	var kv []string
	if err := st.Scan([]byte("k10"), []byte("k30"), func(k, v []byte) bool {
		kv = append(kv, string(k)+"="+string(v))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(kv) {
		t.Fatalf("scan out of order: %v", kv)
	}
	return fmt.Sprint(kv)
}
