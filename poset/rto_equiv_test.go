package poset

import (
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// scripted answers every query honestly except for the vector filters
// named in lies (by canonical text), which get the answer given there:
// any of "u" (covers the new filter), "d" (is covered by it), "o"
// (overlaps it).
func scripted(lies map[string]string) client {
	return func(q Query, _ int) Answer {
		a := Evaluate(q)
		for i, text := range q.Texts {
			l, ok := lies[text]
			if !ok {
				continue
			}
			w, bit := i/64, uint64(1)<<(i%64)
			a.Up[w] &^= bit
			a.Down[w] &^= bit
			a.Overlap[w] &^= bit
			for _, c := range l {
				switch c {
				case 'u':
					a.Up[w] |= bit
				case 'd':
					a.Down[w] |= bit
				case 'o':
					a.Overlap[w] |= bit
				}
			}
		}
		return a
	}
}

// TestRTOVerifyRefusesAHiddenEquivalent: a client that hides that the new
// filter is equivalent to a node (it should join it) must not get it
// placed below that node. Otherwise lies that verify cannot see (every
// covering claimed holds) chain equivalent filters into a cycle
// (E1 -> E3 -> E2 -> E4 -> E1 below B), and once B is deleted no root
// leads to them: every event they match is missed.
func TestRTOVerifyRefusesAHiddenEquivalent(t *testing.T) {
	const b, e1, e2, e3, e4 = `a exists`, `a == 5`, `a == 5 && a exists`, `a == 5 && a >= 5`, `a == 5 && a <= 5`
	p := NewPoset(Config{})
	scan := match.NewScan()
	add := func(id match.ID, text string, lies map[string]string) {
		t.Helper()
		f := match.MustParse(text)
		if _, err := runRTO(p.core, id, 0, f, RTOConfig{Policy: Verify}, scripted(lies)); err != nil {
			t.Fatal(err)
		}
		scan.Insert(id, f)
	}
	add(1, b, nil)
	add(2, e1, nil)
	add(3, e2, map[string]string{e1: ""})             // E2 beside E1 under B
	add(4, e3, map[string]string{e1: "uo", e2: "do"}) // E1 -> E3 -> E2
	add(5, e4, map[string]string{e2: "uo", e1: "do"}) // E2 -> E4 -> E1
	if err := p.Delete(1); err != nil {
		t.Fatal(err)
	}
	scan.Delete(1)
	e := match.MustEvent(match.Attr{Name: "a", Value: match.Int(5)})
	got, want := p.Match(e, nil), scan.Match(e, nil)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("event %s: matched %v, want %v\n%s", e, got, want, p)
	}
	if err := checkCommon(p.core); err != nil {
		t.Fatalf("%v\n%s", err, p)
	}
}

// TestRTOScratchHoldsNoNodes: the memory a finished placement hands back
// to the structure keeps no pointer to a node or filter, so deleting the
// subscriptions frees their nodes even before the next placement.
func TestRTOScratchHoldsNoNodes(t *testing.T) {
	for _, st := range structures {
		c := st.make(Config{})
		texts := []string{`a > 1`, `a > 2`, `a > 3 && b < 4`, `a > 5`, `b < 2`, `a > 4`, `a > 6 && b < 1`}
		for i, text := range texts {
			if _, err := runRTO(c, match.ID(i+1), 0, match.MustParse(text), RTOConfig{Policy: Verify, VectorSize: 2}, honest); err != nil {
				t.Fatal(err)
			}
		}
		for i := range texts {
			if err := c.Delete(match.ID(i + 1)); err != nil {
				t.Fatal(err)
			}
		}
		s := c.rtoMem
		if s == nil {
			t.Fatalf("%s: no placement memory handed back", st.name)
		}
		held := 0
		for _, l := range [][]*node{s.cur, s.next, s.ups, s.downs, s.todo, s.stack, s.expandable} {
			for _, n := range l[:cap(l)] {
				if n != nil {
					held++
				}
			}
		}
		for _, v := range append(s.vectors[:cap(s.vectors)], s.buckets[:cap(s.buckets)]...) {
			if v != nil {
				held++
			}
		}
		for _, q := range s.queries[:cap(s.queries)] {
			if q.Filters != nil || q.Filter.Len() > 0 {
				held++
			}
		}
		for _, f := range s.filters[:cap(s.filters)] {
			if f.Len() > 0 {
				held++
			}
		}
		if held > 0 || s.firstUp != nil {
			t.Errorf("%s: the structure's placement memory still points at %d deleted nodes or filters", st.name, held)
		}
	}
}

// TestRTOQuerySizeOfLongTexts: Size counts what AppendWire writes even
// for a filter text beyond the 65,535 bytes a text's length can say
// (runRTO's checkQuery compares them).
func TestRTOQuerySizeOfLongTexts(t *testing.T) {
	p := NewPoset(Config{})
	long := match.MustParse(`s == "` + strings.Repeat("x", 70_000) + `"`)
	if err := p.Add(1, 0, long); err != nil {
		t.Fatal(err)
	}
	if _, err := runRTO(p.core, 2, 0, match.MustParse(`s exists`), RTOConfig{Policy: Verify}, honest); err != nil {
		t.Fatal(err)
	}
}

// TestRTOUnverifiedLiesCloseNoCycle: under trust (and an undisputed
// majority) the same lies as in TestRTOVerifyRefusesAHiddenEquivalent are
// taken without covering tests, but the placement that would close the
// cycle E1 -> E3 -> E2 -> E4 -> E1 falls back to a normal insert, so the
// structure stays acyclic and every node stays below a root once B goes
// (a cycle would hang walks up the structure, such as FF's deepest).
func TestRTOUnverifiedLiesCloseNoCycle(t *testing.T) {
	const b, e1, e2, e3, e4 = `a exists`, `a == 5`, `a == 5 && a exists`, `a == 5 && a >= 5`, `a == 5 && a <= 5`
	for _, cfg := range []RTOConfig{{Policy: Trust}, {Policy: Majority, Clients: 3}} {
		t.Run(cfg.Policy.String(), func(t *testing.T) {
			p := NewPoset(Config{})
			fallbacks := 0
			add := func(id match.ID, text string, lies map[string]string) {
				t.Helper()
				st, err := runRTO(p.core, id, 0, match.MustParse(text), cfg, scripted(lies))
				if err != nil {
					t.Fatal(err)
				}
				if st.Fallback {
					fallbacks++
				}
			}
			add(1, b, nil)
			add(2, e1, nil)
			add(3, e2, map[string]string{e1: ""})
			add(4, e3, map[string]string{e1: "uo", e2: "do"})
			add(5, e4, map[string]string{e2: "uo", e1: "do"}) // would close the cycle
			if fallbacks != 1 {
				t.Errorf("%d placements fell back, want 1 (the one closing the cycle)\n%s", fallbacks, p)
			}
			if err := p.Delete(1); err != nil {
				t.Fatal(err)
			}
			if err := checkCommon(p.core); err != nil {
				t.Fatalf("%v\n%s", err, p)
			}
		})
	}
}
