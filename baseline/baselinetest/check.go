// Package baselinetest is the differential suite every baseline index
// passes: seeded random workloads of inserts, bulk loads, deletes and
// events, run through the index and through match.Scan side by side,
// with every operator and every value type drawn (ints and floats mixed,
// ints above 2^53, strings, bools, absent attributes, type mismatches).
// Filters with a constraint the algorithm does not support must be
// refused with baseline.ErrUnsupported and leave the index unchanged.
// Import it only from tests.
package baselinetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/baseline"
	"github.com/sift-pubsub/sift/match"
)

// Supports says which constraints an algorithm accepts.
type Supports func(c match.Constraint) bool

// All supports every constraint.
func All(match.Constraint) bool { return true }

// NumericRanges supports ==, <, <=, >, >= with a numeric value: the
// interval model of REIN and TAMA.
func NumericRanges(c match.Constraint) bool {
	switch c.Op {
	case match.OpEq, match.OpLt, match.OpLe, match.OpGt, match.OpGe:
		k := c.Val.Kind()
		return k == match.KindInt || k == match.KindFloat
	}
	return false
}

// Check runs one seeded workload of steps operations (the seed is in
// every failure message) through a fresh index from newIndex and through
// Scan, and fails unless Match equals Scan on every event, Len agrees,
// and every refusal is an ErrUnsupported of a filter with an unsupported
// constraint that changes nothing.
func Check(t *testing.T, seed uint64, steps int, supports Supports, newIndex func() match.Index) {
	t.Helper()
	g := NewGen(seed, supports)
	r := rand.New(rand.NewPCG(seed, 0xd1ff))
	idx, ref := newIndex(), match.NewScan()
	var live []match.ID
	next := match.ID(0)
	newID := func() match.ID {
		next++
		if seed%2 == 0 {
			return next*7919 + 1<<40 // sparse ids, far apart
		}
		return next
	}
	insert := func(id match.ID, f match.Filter) {
		err := idx.Insert(id, f)
		if ok := g.supported(f); !ok {
			if !errors.Is(err, baseline.ErrUnsupported) {
				t.Fatalf("seed %d: insert of unsupported %v: error %v, want ErrUnsupported", seed, f, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("seed %d: insert %d %v: %v", seed, id, f, err)
		}
		ref.Insert(id, f)
		live = append(live, id)
	}
	for step := range steps {
		switch op := r.IntN(20); {
		case op < 8:
			insert(newID(), g.Filter())
		case op == 8:
			load(t, seed, g, idx, ref, &live, newID)
		case op < 12 && len(live) > 0:
			i := r.IntN(len(live))
			id := live[i]
			live = slices.Delete(live, i, i+1)
			if err := idx.Delete(id); err != nil {
				t.Fatalf("seed %d: delete %d: %v", seed, id, err)
			}
			ref.Delete(id)
		case op == 12 && len(live) > 0:
			// Re-insert a live id: refused, nothing changes.
			if err := idx.Insert(live[r.IntN(len(live))], g.Filter()); err == nil {
				t.Fatalf("seed %d: insert of a present id accepted", seed)
			}
		case op == 13:
			if err := idx.Delete(newID()); err == nil {
				t.Fatalf("seed %d: delete of an absent id accepted", seed)
			}
		default:
			e := g.Event()
			got := match.SortIDs(idx.Match(e, nil))
			want := match.SortIDs(ref.Match(e, nil))
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d, %d subscriptions: event %v: got %v, want %v\n%s",
					seed, step, ref.Len(), e, got, want, explain(ref, got, want))
			}
		}
		if idx.Len() != ref.Len() {
			t.Fatalf("seed %d step %d: Len %d, want %d", seed, step, idx.Len(), ref.Len())
		}
	}
}

// load bulk-loads a few filters (through match.Load, so Insert when the
// index has no Load): all supported ones go in, or, when one is
// unsupported, none.
func load(t *testing.T, seed uint64, g *Gen, idx match.Index, ref *match.Scan, live *[]match.ID, newID func() match.ID) {
	t.Helper()
	n := 1 + g.r.IntN(8)
	ids := make([]match.ID, n)
	fs := make([]match.Filter, n)
	ok := true
	for i := range ids {
		ids[i], fs[i] = newID(), g.Filter()
		ok = ok && g.supported(fs[i])
	}
	_, bulk := idx.(match.BulkLoader)
	if !ok && !bulk {
		return // Insert one by one would keep a prefix; nothing to check here.
	}
	err := match.Load(idx, ids, fs)
	if !ok {
		if !errors.Is(err, baseline.ErrUnsupported) {
			t.Fatalf("seed %d: load with an unsupported filter: error %v, want ErrUnsupported", seed, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("seed %d: load: %v", seed, err)
	}
	for i, id := range ids {
		ref.Insert(id, fs[i])
		*live = append(*live, id)
	}
}

func explain(ref *match.Scan, got, want []match.ID) string {
	s := ""
	for _, id := range got {
		if !slices.Contains(want, id) {
			f, _ := ref.Filter(id)
			s += fmt.Sprintf("  extra %d: %v\n", id, f)
		}
	}
	for _, id := range want {
		if !slices.Contains(got, id) {
			f, _ := ref.Filter(id)
			s += fmt.Sprintf("  missing %d: %v\n", id, f)
		}
	}
	return s
}
