package replica

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/memstore"
	"pgregory.net/rapid"
)

// TestOverlayReadsLikeApplied checks the overlay against the naive
// reference: a store with the pending batches applied.
func TestOverlayReadsLikeApplied(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.Custom(func(t *rapid.T) []byte {
			return []byte{byte(rapid.IntRange(0, 12).Draw(t, "k"))}
		})
		batch := func(label string) *durable.Batch {
			b := &durable.Batch{}
			for range rapid.IntRange(0, 6).Draw(t, label+"n") {
				k := key.Draw(t, "key")
				switch rapid.IntRange(0, 2).Draw(t, "op") {
				case 0:
					b.Set(k, []byte(fmt.Sprint(rapid.IntRange(0, 99).Draw(t, "v"))))
				case 1:
					b.Delete(k)
				case 2:
					b.DeleteRange(k, []byte{k[0] + byte(rapid.IntRange(0, 4).Draw(t, "w"))})
				}
			}
			return b
		}
		base, want := memstore.New(), memstore.New()
		b0 := batch("base")
		if err := base.Apply(b0, true); err != nil {
			t.Fatal(err)
		}
		if err := want.Apply(b0, true); err != nil {
			t.Fatal(err)
		}
		ov := &overlay{base: base}
		for range rapid.IntRange(0, 4).Draw(t, "pending") {
			b := batch("pending")
			ov.push(b)
			if err := want.Apply(b, true); err != nil {
				t.Fatal(err)
			}
		}
		for k := range 13 {
			gv, gok, _ := ov.Get([]byte{byte(k)})
			wv, wok, _ := want.Get([]byte{byte(k)})
			if gok != wok || !bytes.Equal(gv, wv) {
				t.Fatalf("Get(%d) = %q %v, want %q %v", k, gv, gok, wv, wok)
			}
		}
		lo, hi := byte(rapid.IntRange(0, 12).Draw(t, "lo")), byte(rapid.IntRange(0, 13).Draw(t, "hi"))
		limit := rapid.IntRange(1, 14).Draw(t, "limit")
		scan := func(s durable.Store) []string {
			var out []string
			if err := s.Scan([]byte{lo}, []byte{hi}, func(k, v []byte) bool {
				out = append(out, fmt.Sprintf("%x=%s", k, v))
				return len(out) < limit
			}); err != nil {
				t.Fatal(err)
			}
			return out
		}
		if got, exp := scan(ov), scan(want); fmt.Sprint(got) != fmt.Sprint(exp) {
			t.Fatalf("Scan [%d,%d) limit %d = %v, want %v", lo, hi, limit, got, exp)
		}
	})
}
