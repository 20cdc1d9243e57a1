package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// treeVariant is one way of running TestTree: extra flags for every siftd
// (an argument "{ff}" stands for a fixed-filters file the test writes)
// and every `sift sub`, plus flags for every second subscriber (liars
// among honest clients, say). evidence names a metric whose sum over the
// routers must end above zero, so a variant cannot pass without its mode
// having been used.
type treeVariant struct {
	name     string
	siftd    []string
	sub      []string
	subOdd   []string
	evidence string
	long     bool // only with SIFT_LONG_TESTS=1
}

// treeVariants: adding a way of routing to the tree test is one line.
var treeVariants = []treeVariant{
	{name: "poset", siftd: []string{"--table", "poset"}},
	{name: "forest", siftd: []string{"--table", "forest"}},
	{name: "bloom-bftree", siftd: []string{"--forward", "bloom", "--bloom-index", "bftree"},
		evidence: "sift_router_bloom_summaries_total"},
	{name: "bloom-sbstree-forest", siftd: []string{"--forward", "bloom", "--bloom-index", "sbstree", "--table", "forest"},
		evidence: "sift_router_bloom_summaries_total"},
	{name: "rto-trust-honest", siftd: []string{"--rto", "trust"}, sub: []string{"--assist"},
		evidence: "sift_router_assist_placements_total", long: true},
	{name: "rto-ff-verify-half-lying", siftd: []string{"--rto", "verify", "--ff", "{ff}"}, sub: []string{"--assist"}, subOdd: []string{"--assist-lie"},
		evidence: "sift_router_assist_placements_total"},
	{name: "rto-majority-honest", siftd: []string{"--rto", "majority", "--rto-clients", "2"}, sub: []string{"--assist"},
		evidence: "sift_router_assist_placements_total", long: true},
	{name: "ff-verify-half-lying", siftd: []string{"--rto", "verify", "--ff", "{ff}"}, sub: []string{"--assist"}, subOdd: []string{"--assist-lie"},
		evidence: `sift_router_assist_placements_total{mode="ff"`},
}

// treeFixedFilters are the fixed filters of the FF variants.
var treeFixedFilters = []string{`side == "buy"`, `side == "sell"`, `short == true`, `price > 50`, `volume >= 1000`}

// TestTree runs five siftd processes in a tree,
//
//	      r1
//	     /  \
//	   r2    r3        (each child dials its parent)
//	  /  \
//	r4    r5
//
// with publishers at r4 and r3 and subscribers at r1, r3, r4 and r5
// (r2 is an inner router only), for each variant in treeVariants:
//
//   - before: every subscriber gets exactly the events its filter matches
//     (match.Scan) from both publishers, once, in per-publisher order;
//     this includes a subscription at r5 covered by one at r3, which
//     /debug/routes shows pruned on the link r2 -> r4 (in Bloom mode, the
//     false-negative trap: r4 must still summarise events for it);
//   - during: r2 is SIGKILLed and both publishers publish again:
//     subscribers still joined to a publisher (r1 and r3 to r3's, r4 to
//     its own) get all its matching events; those cut off may lose some,
//     but nobody gets a duplicate, a reordered or a non-matching event;
//   - after: r2 is restarted on the same address and data folder; once
//     every link is up again (log lines) and a probe subscription at each
//     router is ready, both publishers publish and every subscriber gets
//     every matching event again (routing healed by resynchronisation);
//   - finally every subscriber is closed (killed) and every router's
//     /debug/routes must become empty: nothing forwarded, nothing held.
func TestTree(t *testing.T) {
	for _, v := range treeVariants {
		t.Run(v.name, func(t *testing.T) {
			if v.long && os.Getenv("SIFT_LONG_TESTS") != "1" {
				t.Skip("a long variant: SIFT_LONG_TESTS=1 runs it")
			}
			t.Parallel() // mostly waiting on idle timeouts: two at a time halve the wall time
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			c := newCluster(t, ctx, withFixedFilters(t, v.siftd))
			r1 := c.start("r1")
			r2 := c.start("r2", r1)
			r3 := c.start("r3", r1)
			tr := tree{r1, r2, r3, c.start("r4", r2), c.start("r5", r2)}
			testTree(t, ctx, c, tr, v, killR2)
		})
	}
}

// withFixedFilters returns flags with "{ff}" replaced by a file of
// treeFixedFilters.
func withFixedFilters(t *testing.T, flags []string) []string {
	t.Helper()
	out := slices.Clone(flags)
	for i, f := range out {
		if f == "{ff}" {
			out[i] = filepath.Join(t.TempDir(), "fixed.txt")
			if err := os.WriteFile(out[i], []byte(strings.Join(treeFixedFilters, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// tree is the five routers of the tree test: r2 and r3 dial r1, r4 and
// r5 dial r2.
type tree struct{ r1, r2, r3, r4, r5 *node }

// treeOutage is how a tree test breaks routing and mends it.
type treeOutage struct {
	what string
	// part names the component of each router while broken (a router
	// that is down has none).
	part map[string]string
	// begin breaks routing; end mends it and waits until every link
	// that was lost is up again on both sides.
	begin, end func(c *cluster, tr tree)
}

// killR2: r2 is SIGKILLed, then restarted on the same address and data
// folder.
var killR2 = treeOutage{
	what: "r2 killed",
	part: map[string]string{"r1": "r1+r3", "r3": "r1+r3", "r4": "r4", "r5": "r5"},
	begin: func(c *cluster, tr tree) {
		tr.r2.p.kill()
	},
	end: func(c *cluster, tr tree) {
		c.run(tr.r2)
		c.waitLinks(tr.r2, tr.r1, tr.r4, tr.r5)
		c.waitLinks(tr.r1, tr.r2)
		c.waitLinks(tr.r4, tr.r2)
		c.waitLinks(tr.r5, tr.r2)
	},
}

// treeEventsPerBatch is how many events each publisher publishes per
// phase.
const treeEventsPerBatch = 400

// treeSubscription is one subscriber of the tree test.
type treeSubscription struct {
	at     string
	filter match.Filter
}

// testTree runs the phases described at TestTree on a started tree,
// breaking it with out.
func testTree(t *testing.T, ctx context.Context, c *cluster, tr tree, v treeVariant, out treeOutage) {
	began := time.Now()
	r1, r2, r3, r4, r5 := tr.r1, tr.r2, tr.r3, tr.r4, tr.r5
	waitTree(c, r1, r2, r3, r4, r5)

	const seed = 17
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 300, Events: 2 * 3 * treeEventsPerBatch}, seed)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("workload.Stock seed %d", seed)
	wide, covered, others := treeFilters(t, w)
	pubs := []*publisher{{name: "pA", at: r4}, {name: "pB", at: r3}}
	byName := map[string]*node{"r1": r1, "r3": r3, "r4": r4, "r5": r5}

	// The covering pair first, in order, so that covered is pruned.
	subFlags := func(i int) []string {
		if i%2 == 1 {
			return append(slices.Clone(v.sub), v.subOdd...)
		}
		return v.sub
	}
	subs := []*subscriber{c.subscribe("wide", r3, wide, subFlags(0)...)}
	subs = append(subs, c.subscribe("covered", r5, covered, subFlags(1)...))
	for i, s := range others {
		subs = append(subs, c.subscribe(fmt.Sprintf("s%d", i), byName[s.at], s.filter, subFlags(i)...))
	}
	checkPruned(t, r2, r4, r5, wide, covered)

	complete := func(s *subscriber, p *publisher, phase string) bool {
		return phase != "during" || out.part[s.at.name] != "" && out.part[s.at.name] == out.part[p.at.name]
	}
	batch := func(phase int) map[*publisher][]match.Event {
		out := map[*publisher][]match.Event{}
		for i, p := range pubs {
			k := (phase*len(pubs) + i) * treeEventsPerBatch
			out[p] = w.Events[k : k+treeEventsPerBatch]
		}
		return out
	}

	publishAll(t, ctx, c, "before", batch(0))
	waitPhase(t, ctx, subs, pubs, complete)
	t.Logf("before: delivered (%v since start)", time.Since(began).Round(time.Millisecond))

	out.begin(c, tr)
	publishAll(t, ctx, c, "during", batch(1))
	waitPhase(t, ctx, subs, pubs, complete)
	t.Logf("during (%s): delivered within components %v (%v)", out.what, out.part, time.Since(began).Round(time.Millisecond))

	out.end(c, tr)
	var probes []*subscriber
	for _, n := range []*node{r1, r3, r4, r5} {
		probes = append(probes, c.subscribe("probe", n, match.MustParse(fmt.Sprintf(`zz_probe == %q`, n.name))))
	}
	t.Logf("healed: links up, probes ready (%v)", time.Since(began).Round(time.Millisecond))
	hopsBefore := linkCounts(t, r2)
	publishAll(t, ctx, c, "after", batch(2))
	waitPhase(t, ctx, subs, pubs, complete)
	t.Logf("after: delivered (%v)", time.Since(began).Round(time.Millisecond))
	if !slices.Contains(v.siftd, "bloom") {
		checkHopCounts(t, tr, pubs, subs, hopsBefore)
	}

	if v.evidence != "" {
		checkEvidence(t, v.evidence, r1, r2, r3, r4, r5)
	}
	for _, s := range append(slices.Clone(subs), probes...) {
		s.p.kill()
	}
	for _, s := range subs {
		rep, err := checkDelivery(s, pubs, complete)
		if err != nil {
			t.Error(err)
		}
		t.Logf("%-7s at %s %-60s got/matching per phase %v", s.name, s.at.name, s.filter, rep)
	}
	for _, n := range []*node{r1, r2, r3, r4, r5} {
		eventually(t, ctx, n.name+" routing table empty after every subscriber closed", func() error { return emptyRoutes(n) })
	}
	t.Logf("tables empty (%v)", time.Since(began).Round(time.Millisecond))
	c.stopAll()
}

// waitTree waits for every link of the tree to be up on both sides.
func waitTree(c *cluster, r1, r2, r3, r4, r5 *node) {
	c.t.Helper()
	c.waitLinks(r1, r2, r3)
	c.waitLinks(r2, r1, r4, r5)
	c.waitLinks(r3, r1)
	c.waitLinks(r4, r2)
	c.waitLinks(r5, r2)
}

// treeFilters picks the test's filters from the workload: wide (the most
// traded symbol) at r3, covered (that symbol above its median price, so
// wide covers it) at r5, and others of different selectivity spread over
// r1, r3, r4 and r5, including one matching nothing.
func treeFilters(t *testing.T, w workload.Workload) (wide, covered match.Filter, others []treeSubscription) {
	t.Helper()
	count := map[string]int{}
	for _, e := range w.Events {
		v, _ := e.Get("symbol")
		count[v.AsString()]++
	}
	symbols := make([]string, 0, len(count))
	for s := range count {
		symbols = append(symbols, s)
	}
	sort.Slice(symbols, func(i, j int) bool {
		return count[symbols[i]] > count[symbols[j]] || count[symbols[i]] == count[symbols[j]] && symbols[i] < symbols[j]
	})
	top := symbols[0]
	var prices []float64
	for _, e := range w.Events {
		if v, _ := e.Get("symbol"); v.AsString() == top {
			p, _ := e.Get("price")
			prices = append(prices, p.AsFloat())
		}
	}
	slices.Sort(prices)
	wide = match.MustParse(fmt.Sprintf("symbol == %q", top))
	covered = match.MustParse(fmt.Sprintf("symbol == %q && price > %v", top, prices[len(prices)/2]))
	if !match.Covers(wide, covered) {
		t.Fatalf("%s does not cover %s", wide, covered)
	}
	picked := pickFilters(w) // four of different selectivity, then one matching nothing
	ats := []string{"r1", "r3", "r4", "r5", "r4"}
	for i, f := range picked {
		others = append(others, treeSubscription{ats[i%len(ats)], f})
	}
	others = append(others,
		treeSubscription{"r1", match.MustParse(`side == "buy" && short == true`)},
		treeSubscription{"r4", match.MustParse(fmt.Sprintf(`symbol == %q && side == "sell"`, symbols[1]))},
		treeSubscription{"r5", match.MustParse(fmt.Sprintf(`symbol == %q`, symbols[2]))},
	)
	return wide, covered, others
}

// checkPruned checks in /debug/routes that covering did its work: the
// covered filter reached r2 from r5 but was not forwarded to r4, which
// holds the wide filter instead.
func checkPruned(t *testing.T, r2, r4, r5 *node, wide, covered match.Filter) {
	t.Helper()
	atR2, err := r2.routes()
	if err != nil {
		t.Fatal(err)
	}
	atR4, err := r4.routes()
	if err != nil {
		t.Fatal(err)
	}
	fromR5, ok1 := atR2.link(r5.name)
	toR4, ok2 := atR4.link(r2.name)
	if !ok1 || !ok2 {
		t.Fatalf("links missing: r2 has %v, r4 has %v", atR2.peers(), atR4.peers())
	}
	has := func(list []string, f match.Filter) bool {
		for _, s := range list {
			if g, err := match.Parse(s); err == nil && g.Equal(f) {
				return true
			}
		}
		return false
	}
	if !has(fromR5.Received, covered) {
		t.Errorf("r2 does not hold %s from r5: %q", covered, fromR5.Received)
	}
	if !has(toR4.Received, wide) || has(toR4.Received, covered) {
		t.Errorf("r4 holds from r2 %q; want %s and not %s (covered by it)", toR4.Received, wide, covered)
	}
	t.Logf("covering: r4 holds from r2 [%s]", strings.Join(toR4.Received, "; "))
}

// checkEvidence fails unless metric (a name, or a name and the start of
// its labels), summed over every matching series and router, is above
// zero; it logs the series.
func checkEvidence(t *testing.T, metric string, nodes ...*node) {
	t.Helper()
	var total float64
	var series []string
	for _, n := range nodes {
		body, err := n.get("/metrics")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(body), "\n") {
			rest, ok := strings.CutPrefix(line, metric)
			if !ok || rest == "" || !strings.Contains(metric, "{") && rest[0] != '{' && rest[0] != ' ' {
				continue
			}
			var v float64
			if _, err := fmt.Sscan(rest[strings.LastIndexByte(rest, ' ')+1:], &v); err == nil && v != 0 {
				total += v
				series = append(series, n.name+": "+line)
			}
		}
	}
	if total <= 0 {
		t.Errorf("%s is zero on every router: the variant's mode was not used", metric)
	}
	t.Logf("evidence: %s", strings.Join(series, "; "))
}

// checkHopCounts checks that the inner router r2 filtered exactly in the
// "after" phase: the events it received and sent on each link since
// before (sift_router_link_events_total, read before the phase) are
// exactly the after-phase events that match a subscription somewhere
// behind the link they went out on (exact forwarding only: Bloom
// forwarding may send false positives).
func checkHopCounts(t *testing.T, tr tree, pubs []*publisher, subs []*subscriber, before map[string]int) {
	t.Helper()
	behind := map[string][]*node{"r1": {tr.r1, tr.r3}, "r4": {tr.r4}, "r5": {tr.r5}}
	wants := func(peer string, e match.Event) bool {
		for _, s := range subs {
			if slices.Contains(behind[peer], s.at) && s.filter.Matches(e) {
				return true
			}
		}
		return false
	}
	want := map[string]int{}
	for _, p := range pubs {
		from := "r4" // the link pA's events reach r2 on
		if p.at == tr.r3 {
			from = "r1"
		}
		for i, e := range p.events {
			if p.phases[i] != "after" {
				continue
			}
			to := 0
			for peer := range behind {
				if peer != from && wants(peer, e) {
					want[`dir="out",link="`+peer+`"`]++
					to++
				}
			}
			if to > 0 {
				want[`dir="in",link="`+from+`"`]++
			}
		}
	}
	got := linkCounts(t, tr.r2)
	for k, v := range before {
		if got[k] -= v; got[k] == 0 {
			delete(got, k)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("r2 link counters in the after phase: %v, want exactly the matching after-phase events %v", got, want)
	}
	t.Logf("r2 forwarded exactly: %v", got)
}

// linkCounts reads n's non-zero sift_router_link_events_total series, by
// labels.
func linkCounts(t *testing.T, n *node) map[string]int {
	t.Helper()
	body, err := n.get("/metrics")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, line := range strings.Split(string(body), "\n") {
		labels, ok := strings.CutPrefix(line, "sift_router_link_events_total{")
		if i := strings.Index(labels, "} "); ok && i > 0 {
			var v int
			fmt.Sscan(labels[i+2:], &v)
			if v != 0 {
				got[labels[:i]] = v
			}
		}
	}
	return got
}
