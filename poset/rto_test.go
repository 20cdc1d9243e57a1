package poset

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// client answers a query; i is the client's position among those asked.
type client func(q Query, i int) Answer

func honest(q Query, _ int) Answer { return Evaluate(q) }

// runRTO drives a placement to the end with the given clients.
func runRTO(c *core, id match.ID, from Iface, f match.Filter, cfg RTOConfig, cl client) (RTOStats, error) {
	p, err := c.StartRTO(id, from, f, cfg)
	if err != nil {
		return RTOStats{}, err
	}
	for !p.Done() {
		answers := make([][]Answer, len(p.Queries()))
		for qi, q := range p.Queries() {
			if err := checkQuery(q); err != nil {
				return p.Stats(), err
			}
			for i := range p.Clients() {
				answers[qi] = append(answers[qi], cl(q, i))
			}
		}
		if _, err := p.Answer(answers); err != nil {
			return p.Stats(), err
		}
	}
	return p.Stats(), nil
}

// checkQuery checks a query's texts and wire form against its filters.
func checkQuery(q Query) error {
	if q.Text != q.Filter.String() || len(q.Texts) != len(q.Filters) {
		return fmt.Errorf("query texts: %q for %s, %d texts for %d filters", q.Text, q.Filter, len(q.Texts), len(q.Filters))
	}
	for i, f := range q.Filters {
		if q.Texts[i] != f.String() {
			return fmt.Errorf("query text %d: %q for %s", i, q.Texts[i], f)
		}
	}
	if got := len(q.AppendWire(nil)); got != q.Size() {
		return fmt.Errorf("query wire form: %d bytes, Size %d", got, q.Size())
	}
	return nil
}

// liar returns a client whose answers are wrong in the given style; the
// first `liars` clients of each query lie, the others are honest.
func liar(style string, liars int, rng *rand.Rand) client {
	return func(q Query, i int) Answer {
		a := Evaluate(q)
		if i >= liars {
			return a
		}
		n := len(q.Filters)
		switch style {
		case "random":
			for j := range n {
				if rng.IntN(2) == 0 {
					a.Up[j/64] ^= 1 << (j % 64)
				}
				if rng.IntN(2) == 0 {
					a.Down[j/64] ^= 1 << (j % 64)
				}
				if rng.IntN(2) == 0 {
					a.Overlap[j/64] ^= 1 << (j % 64)
				}
			}
		case "invert": // every bit wrong, the same way for every liar
			for j := range n {
				a.Up[j/64] ^= 1 << (j % 64)
				a.Down[j/64] ^= 1 << (j % 64)
				a.Overlap[j/64] ^= 1 << (j % 64)
			}
		case "all": // everything covers and is covered
			for j := range n {
				a.Up.Set(j)
				a.Down.Set(j)
				a.Overlap.Set(j)
			}
		case "none": // lies by omission
			a = Answer{Up: NewBits(n), Down: NewBits(n), Overlap: NewBits(n)}
		}
		return a
	}
}

// TestRTOHonestEqualsLocal: with honest clients, every policy builds
// exactly the structure a local insert builds.
func TestRTOHonestEqualsLocal(t *testing.T) {
	for _, st := range structures {
		for _, pol := range []Policy{Trust, Majority, Verify} {
			t.Run(st.name+"/"+pol.String(), func(t *testing.T) {
				rapid.Check(t, func(t *rapid.T) {
					defer forceKids(t)()
					local, offl := st.make(Config{}), st.make(Config{})
					cfg := RTOConfig{Policy: pol, VectorSize: rapid.IntRange(1, 4).Draw(t, "vsize")}
					var live []match.ID
					for id := range match.ID(rapid.IntRange(1, 30).Draw(t, "steps")) {
						if len(live) > 0 && rapid.IntRange(0, 3).Draw(t, "op") == 0 {
							i := rapid.IntRange(0, len(live)-1).Draw(t, "victim")
							local.Delete(live[i])
							offl.Delete(live[i])
							live = slices.Delete(live, i, i+1)
							continue
						}
						f := genFilter().Draw(t, "f")
						if err := local.Add(id, 0, f); err != nil {
							t.Fatal(err)
						}
						stats, err := runRTO(offl, id, 0, f, cfg, honest)
						if err != nil {
							t.Fatal(err)
						}
						if stats.Fallback {
							t.Fatalf("honest answers fell back: %+v", stats)
						}
						live = append(live, id)
						if a, b := local.String(), offl.String(); a != b {
							t.Fatalf("after inserting %s:\nlocal:\n%s\noffloaded:\n%s", f, a, b)
						}
					}
				})
			})
		}
	}
}

// TestRTOLiarsNeverLoseMatches: lying clients under majority (a colluding
// minority) and verify (any number) never make Match differ from Scan.
func TestRTOLiarsNeverLoseMatches(t *testing.T) {
	events := allEvents()
	cases := []struct {
		pol     Policy
		clients int
		liars   int
	}{
		{Verify, 1, 1},
		{Majority, 3, 1}, // colluding minority
		{Majority, 5, 2},
		{Majority, 3, 2}, // colluding majority: disagreement triggers verification
	}
	for _, st := range structures {
		for _, style := range []string{"random", "invert", "all", "none"} {
			for _, tc := range cases {
				t.Run(st.name+"/"+style+"/"+tc.pol.String(), func(t *testing.T) {
					rapid.Check(t, func(t *rapid.T) {
						defer forceKids(t)()
						seed := rapid.Uint64().Draw(t, "seed")
						rng := rand.New(rand.NewPCG(seed, 1))
						c := st.make(Config{})
						scan := match.NewScan()
						from := map[match.ID]Iface{}
						cfg := RTOConfig{Policy: tc.pol, Clients: tc.clients, VectorSize: 3}
						var live []match.ID
						for id := range match.ID(rapid.IntRange(1, 25).Draw(t, "steps")) {
							if len(live) > 0 && rapid.IntRange(0, 3).Draw(t, "op") == 0 {
								i := rapid.IntRange(0, len(live)-1).Draw(t, "victim")
								c.Delete(live[i])
								scan.Delete(live[i])
								live = slices.Delete(live, i, i+1)
							} else {
								f := genFilter().Draw(t, "f")
								if _, err := runRTO(c, id, 0, f, cfg, liar(style, tc.liars, rng)); err != nil {
									t.Fatal(err)
								}
								scan.Insert(id, f)
								from[id] = 0
								live = append(live, id)
							}
							if err := checkCommon(c); err != nil {
								t.Fatalf("%v\n%s", err, c)
							}
							if err := checkMatch(c, scan, from, events); err != nil {
								t.Fatalf("%v\n%s", err, c)
							}
						}
					})
				})
			}
		}
	}
}

// TestRTOTrustIsUnsafe documents why Trust is only for trusted clients: a
// single lie places a filter below one that does not cover it, and an
// event it matches is missed.
func TestRTOTrustIsUnsafe(t *testing.T) {
	p := NewPoset(Config{})
	p.Add(1, 0, match.MustParse("a > 10"))
	f := match.MustParse("a > 0")
	if _, err := runRTO(p.core, 2, 0, f, RTOConfig{Policy: Trust}, liar("all", 1, nil)); err != nil {
		t.Fatal(err)
	}
	e := match.MustEvent(match.Attr{Name: "a", Value: match.Int(5)})
	if got := p.Match(e, nil); len(got) != 0 {
		t.Fatalf("expected the lie to hide subscription 2 from %s; got %v\n%s", e, got, p)
	}
	// The same lie under Verify is caught and the filter placed correctly.
	q := NewPoset(Config{})
	q.Add(1, 0, match.MustParse("a > 10"))
	stats, err := runRTO(q.core, 2, 0, f, RTOConfig{Policy: Verify}, liar("all", 1, nil))
	if err != nil || !stats.Fallback {
		t.Fatalf("verify did not fall back: %+v %v", stats, err)
	}
	if got := q.Match(e, nil); !slices.Equal(got, []match.ID{2}) {
		t.Fatalf("after fallback, match %v\n%s", got, q)
	}
}

func TestRTOMalformedAnswers(t *testing.T) {
	p := NewPoset(Config{})
	p.Add(1, 0, match.MustParse("a > 10"))
	pl, err := p.StartRTO(2, 0, match.MustParse("a > 20"), RTOConfig{Policy: Verify})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pl.Answer(nil); err == nil {
		t.Error("missing answers accepted")
	}
	if _, err := pl.Answer([][]Answer{{{Up: NewBits(200), Down: NewBits(1), Overlap: NewBits(1)}}}); err == nil {
		t.Error("answer of the wrong length accepted")
	}
	beyond := NewBits(1)
	beyond.Set(63) // the vector holds one filter
	if _, err := pl.Answer([][]Answer{{{Up: beyond, Down: NewBits(1), Overlap: NewBits(1)}}}); err == nil {
		t.Error("answer marking a filter beyond the vector accepted")
	}
	p.Add(3, 0, match.MustParse("b > 1"))
	if _, err := pl.Answer([][]Answer{{Evaluate(pl.Queries()[0])}}); err == nil {
		t.Error("answer accepted after the structure changed")
	}
	if _, err := p.StartRTO(1, 0, match.MustParse("c > 1"), RTOConfig{}); err == nil {
		t.Error("duplicate id accepted")
	}
}

// TestRTOHonestEqualsLocalNested: on the covering-heavy Nested workload
// (deep nesting, many parents per node, child indexes in use), each spare
// filter placed by honest clients under Verify gets exactly the parents
// and children a local insert gives it, without a fallback.
func TestRTOHonestEqualsLocalNested(t *testing.T) {
	const n, spare = 1500, 150
	w, err := workload.Nested(workload.NestedConfig{Subscriptions: n + spare, Events: 1}, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, kidsMin := range []int{childIndexMin, 4} {
		old := childIndexMin
		childIndexMin = kidsMin
		local, offl := NewPoset(Config{Classic: true}), NewPoset(Config{Classic: true})
		for i := range n {
			local.Add(match.ID(i), 0, w.Filters[i])
			offl.Add(match.ID(i), 0, w.Filters[i])
		}
		for i := n; i < n+spare; i++ {
			id, f := match.ID(i), w.Filters[i]
			local.Add(id, 0, f)
			stats, err := runRTO(offl.core, id, 0, f, RTOConfig{Policy: Verify, VectorSize: 16}, honest)
			if err != nil || stats.Fallback {
				t.Fatalf("kids %d, %s: err %v, stats %+v", kidsMin, f, err, stats)
			}
			ln, on := local.byID[id], offl.byID[id]
			if d := diffTexts(ln.parents(), on.parents()) + diffTexts(ln.children(), on.children()); d != "" {
				t.Fatalf("kids %d, %s: offloaded placement differs (-local +offloaded): %s", kidsMin, f, d)
			}
			local.Delete(id)
			offl.Delete(id)
		}
		childIndexMin = old
	}
}

// diffTexts lists the texts only in a (-) or only in b (+).
func diffTexts(a, b []*node) string {
	in := func(l []*node, m *node) bool {
		return slices.ContainsFunc(l, func(x *node) bool { return x.text == m.text })
	}
	var out strings.Builder
	for _, m := range a {
		if !in(b, m) {
			out.WriteString(" -(" + m.text + ")")
		}
	}
	for _, m := range b {
		if !in(a, m) {
			out.WriteString(" +(" + m.text + ")")
		}
	}
	return out.String()
}

// TestRTOStalePlacementKeepsQueries: a placement left unfinished when a
// newer one starts keeps its own queries (the router may still send them;
// their answers are then refused as stale), and the newer one runs on.
func TestRTOStalePlacementKeepsQueries(t *testing.T) {
	p := NewPoset(Config{})
	for i, text := range []string{"a > 10", "b > 1", "a > 30"} {
		p.Add(match.ID(i), 0, match.MustParse(text))
	}
	old, err := p.StartRTO(10, 0, match.MustParse("a > 20"), RTOConfig{Policy: Verify})
	if err != nil {
		t.Fatal(err)
	}
	texts := func(qs []Query) (out []string) {
		for _, q := range qs {
			out = append(out, q.Text+": "+strings.Join(q.Texts, ", "))
		}
		return out
	}
	before := texts(old.Queries())
	if _, err := runRTO(p.core, 11, 0, match.MustParse("b > 5"), RTOConfig{Policy: Verify}, honest); err != nil {
		t.Fatal(err)
	}
	if after := texts(old.Queries()); !slices.Equal(before, after) {
		t.Fatalf("stale placement's queries changed:\n%q\n%q", before, after)
	}
	answers := [][]Answer{}
	for _, q := range old.Queries() {
		answers = append(answers, []Answer{Evaluate(q)})
	}
	if _, err := old.Answer(answers); err == nil {
		t.Fatal("a stale placement accepted answers")
	}
}

// TestRTOLiarsNested: on the covering-heavy Nested workload (deep
// structures, the successor region, child indexes), lying clients under
// verify, and a colluding majority-minority under majority, never make
// Match differ from Scan, and every edge stays a covering.
func TestRTOLiarsNested(t *testing.T) {
	const n, spare = 800, 60
	w, err := workload.Nested(workload.NestedConfig{Subscriptions: n + spare, Events: 300}, 11)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range structures {
		for _, style := range []string{"random", "invert", "all", "none"} {
			for _, cfg := range []RTOConfig{{Policy: Verify, VectorSize: 16}, {Policy: Majority, Clients: 3, VectorSize: 16}} {
				seed := uint64(len(style)) + uint64(cfg.Policy)
				t.Logf("%s/%s/%s: seed %d", st.name, style, cfg.Policy, seed)
				rng := rand.New(rand.NewPCG(seed, 2))
				c := st.make(Config{Classic: true})
				scan := match.NewScan()
				from := map[match.ID]Iface{}
				for i := range n + spare {
					id := match.ID(i)
					if i < n {
						c.Add(id, 0, w.Filters[i])
					} else if _, err := runRTO(c, id, 0, w.Filters[i], cfg, liar(style, 1, rng)); err != nil {
						t.Fatal(err)
					}
					scan.Insert(id, w.Filters[i])
					from[id] = 0
				}
				if err := checkCommon(c); err != nil {
					t.Fatalf("%s/%s/%s: %v", st.name, style, cfg.Policy, err)
				}
				if err := checkMatch(c, scan, from, w.Events); err != nil {
					t.Fatalf("%s/%s/%s: %v", st.name, style, cfg.Policy, err)
				}
			}
		}
	}
}
