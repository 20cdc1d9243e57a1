package durable

import (
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// refStream is the brute-force reference: one state per tick in [1, n].
type refStream struct {
	base, lost Tick
	st         []State
}

func (r *refStream) set(t Tick, s State) bool {
	if t <= r.base || t <= r.lost || r.st[t] != Q {
		return false
	}
	r.st[t] = s
	return true
}

func (r *refStream) get(t Tick) State {
	if t <= r.lost {
		return L
	}
	if t <= r.base {
		return Q
	}
	return r.st[t]
}

// TestStreamMatchesReference applies random operations to a Stream and to
// a per-tick reference and checks every tick state, the doubt horizon and
// the curiosity after each step.
func TestStreamMatchesReference(t *testing.T) {
	const n = 40
	rapid.Check(t, func(t *rapid.T) {
		s := NewStream(0)
		ref := &refStream{st: make([]State, n+2)}
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			a := Tick(rapid.IntRange(1, n).Draw(t, "a"))
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				b := Tick(rapid.IntRange(int(a), n).Draw(t, "b"))
				s.AddSilence(a, b)
				for x := a; x <= b; x++ {
					ref.set(x, S)
				}
			case 1:
				got := s.AddData(a, match.MustEvent(match.Attr{Name: "t", Value: match.Int(int64(a))}))
				if want := ref.set(a, D); got != want {
					t.Fatalf("AddData(%d) new=%v, reference %v", a, got, want)
				}
			case 2:
				s.AddLost(a)
				ref.lost = max(ref.lost, a)
			case 3:
				s.Advance(a)
				ref.base = max(ref.base, a)
			}
			checkAgainstRef(t, s, ref, n)
			checkRuns(t, s)
		}
	})
}

// checkRuns checks the runs' layout: sorted, disjoint, above the floor,
// no two S runs adjacent, D runs one tick wide.
func checkRuns(t *rapid.T, s *Stream) {
	for i := range s.runs.len() {
		r := s.runs.at(i)
		if r.from > r.to || r.from <= s.floor() || (r.state == D && r.from != r.to) {
			t.Fatalf("run %d %+v malformed; stream %v", i, r, s)
		}
		if i > 0 {
			p := s.runs.at(i - 1)
			if p.to >= r.from || (p.state == S && r.state == S && p.to+1 == r.from) {
				t.Fatalf("runs %d and %d overlap or are unmerged S; stream %v", i-1, i, s)
			}
		}
	}
}

// TestRunsMatchSlice: the gap buffer behaves as a plain slice under random
// inserts, removals and front drops at random places.
func TestRunsMatchSlice(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var rs runs
		var ref []run
		next := Tick(1)
		for range rapid.IntRange(1, 200).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 5).Draw(t, "op"); {
			case op <= 2 || len(ref) == 0:
				i := rapid.IntRange(0, len(ref)).Draw(t, "at")
				r := run{from: next, to: next}
				next++
				rs.insert(i, r)
				ref = slices.Insert(ref, i, r)
			case op == 3:
				i := rapid.IntRange(0, len(ref)-1).Draw(t, "at")
				rs.remove(i)
				ref = slices.Delete(ref, i, i+1)
			case op == 4:
				k := rapid.IntRange(0, len(ref)).Draw(t, "k")
				rs.dropFront(k)
				ref = ref[k:]
			default:
				i := rapid.IntRange(0, len(ref)-1).Draw(t, "at")
				rs.at(i).to += 1000
				ref[i].to += 1000
			}
			if rs.len() != len(ref) {
				t.Fatalf("len %d, slice %d", rs.len(), len(ref))
			}
			for i := range ref {
				if got := rs.at(i); got.from != ref[i].from || got.to != ref[i].to {
					t.Fatalf("run %d: %+v, slice %+v", i, *rs.at(i), ref[i])
				}
			}
		}
	})
}

func checkAgainstRef(t *rapid.T, s *Stream, ref *refStream, n Tick) {
	highest := max(ref.base, ref.lost)
	for x := Tick(1); x <= n; x++ {
		got, ev := s.Get(x)
		if want := ref.get(x); got != want {
			t.Fatalf("tick %d: %v, reference %v; stream %v", x, got, want, s)
		}
		if got == D {
			if v, _ := ev.Get("t"); v.AsInt() != int64(x) {
				t.Fatalf("tick %d carries event %v", x, ev)
			}
		}
		if x > ref.base && ref.get(x) != Q {
			highest = x
		}
	}
	h := max(ref.base, ref.lost)
	for h+1 <= n && ref.get(h+1) != Q {
		h++
	}
	if got := s.DoubtHorizon(); got != h {
		t.Fatalf("horizon %d, reference %d; stream %v", got, h, s)
	}
	var qs []Range
	for x := max(ref.base, ref.lost) + 1; x <= highest; x++ {
		if ref.get(x) != Q {
			continue
		}
		if len(qs) > 0 && qs[len(qs)-1].To == x-1 {
			qs[len(qs)-1].To = x
		} else {
			qs = append(qs, Range{x, x})
		}
	}
	got := s.Curiosity()
	if len(got) != len(qs) {
		t.Fatalf("curiosity %v, reference %v; stream %v", got, qs, s)
	}
	for i := range qs {
		if got[i] != qs[i] {
			t.Fatalf("curiosity %v, reference %v; stream %v", got, qs, s)
		}
	}
}
