package bloom_test

import (
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/bftree"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
)

// router is a minimal routing table for the covering trap: the filters
// forwarded to each neighbour (SIENA forwarding: not when a filter already
// forwarded there covers it), one bftree per neighbour of the filters that
// neighbour sent, the local clients' filters, and a dictionary.
type router struct {
	name      string
	p         bloom.Params
	dict      *bloom.Dictionary
	nbrs      []*router
	forwarded map[*router][]match.Filter
	trees     map[*router]*bftree.Tree
	clients   map[string]match.Filter
}

func newRouter(t *testing.T, name string, p bloom.Params) *router {
	d, err := bloom.NewDictionary(p)
	if err != nil {
		t.Fatal(err)
	}
	return &router{name: name, p: p, dict: d, forwarded: map[*router][]match.Filter{},
		trees: map[*router]*bftree.Tree{}, clients: map[string]match.Filter{}}
}

func link(t *testing.T, a, b *router) {
	for _, x := range [][2]*router{{a, b}, {b, a}} {
		tr, err := bftree.New(int(x[0].p.Resolved().M), 8)
		if err != nil {
			t.Fatal(err)
		}
		x[0].nbrs = append(x[0].nbrs, x[1])
		x[0].trees[x[1]] = tr
	}
}

// network holds the routers and how dictionary terms travel.
type network struct {
	routers []*router
	// flood sends a subscription's terms to every router, whatever
	// covering says; otherwise terms travel with forwarded filters only.
	flood bool
}

// subscribe registers a client's filter at r and propagates it.
func (n *network) subscribe(r *router, client string, f match.Filter) {
	r.clients[client] = f
	if n.flood {
		for _, x := range n.routers {
			x.dict.AddFilter(f)
		}
	} else {
		r.dict.AddFilter(f)
	}
	n.forward(r, nil, f)
}

// forward sends f from r to every neighbour but from, unless a filter
// already forwarded there covers it.
func (n *network) forward(r, from *router, f match.Filter) {
	for _, nb := range r.nbrs {
		if nb == from || slices.ContainsFunc(r.forwarded[nb], func(g match.Filter) bool { return match.Covers(g, f) }) {
			continue
		}
		r.forwarded[nb] = append(r.forwarded[nb], f)
		nb.trees[r].Insert(nb.p.Encode(f), 0)
		if !n.flood {
			nb.dict.AddFilter(f)
		}
		n.forward(nb, r, f)
	}
}

// publish builds the summary at the first router and forwards it on the
// Bloom test alone; each router delivers to its clients on an exact
// match. It returns the clients reached.
func (n *network) publish(first *router, e match.Event) []string {
	summary := first.p.NewFilter()
	first.dict.Summary(e, summary)
	var got []string
	var visit func(r, from *router)
	visit = func(r, from *router) {
		for c, f := range r.clients {
			if f.Matches(e) {
				got = append(got, c)
			}
		}
		for _, nb := range r.nbrs {
			if nb != from && len(r.trees[nb].Match(summary, nil)) > 0 {
				visit(nb, r)
			}
		}
	}
	visit(first, nil)
	slices.Sort(got)
	return got
}

// TestCoveringTrap: routers R1 - R2 - R3 in a chain. Client A at R2
// subscribes S1; client B at R3 subscribes S2, which S1 covers. R2 has
// forwarded S1 to R1 already, so it does not forward S2: R1 never learns
// S2. An event published at R1 matches S2 (and so S1). If terms travelled
// with forwarded filters, R1's summary would lack S2's bits and R2's Bloom
// test for R3 would drop the event: B would miss it. With the dictionary
// flooded regardless of covering, B receives it.
func TestCoveringTrap(t *testing.T) {
	s1 := match.MustParse(`price < 10`)
	s2 := match.MustParse(`symbol == "IBM" && price < 5 && venue prefix "NY"`)
	e := match.MustEvent(
		match.Attr{Name: "symbol", Value: match.Str("IBM")},
		match.Attr{Name: "price", Value: match.MustFloat(4.5)},
		match.Attr{Name: "venue", Value: match.Str("NYSE")},
	)
	if !match.Covers(s1, s2) || !s2.Matches(e) {
		t.Fatal("scenario broken: S1 must cover S2 and the event must match S2")
	}
	for _, flood := range []bool{false, true} {
		p := bloom.Params{M: 1024, K: 3}
		r1, r2, r3 := newRouter(t, "R1", p), newRouter(t, "R2", p), newRouter(t, "R3", p)
		link(t, r1, r2)
		link(t, r2, r3)
		n := &network{routers: []*router{r1, r2, r3}, flood: flood}
		n.subscribe(r2, "A", s1)
		n.subscribe(r3, "B", s2)
		if len(r2.forwarded[r1]) != 1 || !r2.forwarded[r1][0].Equal(s1) {
			t.Fatalf("covering did not hide S2 from R1: R2 forwarded %v", r2.forwarded[r1])
		}
		got := n.publish(r1, e)
		want := []string{"A", "B"}
		if !flood {
			// The trap is real: without flooding, B misses the event.
			want = []string{"A"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("flood=%v: delivered to %v, want %v", flood, got, want)
		}
	}
}
