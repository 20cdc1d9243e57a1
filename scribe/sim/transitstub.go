package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/sift-pubsub/sift/scribe"
)

// TransitStubConfig shapes a GT-ITM-style transit-stub topology. Delays are
// in microseconds, drawn uniformly from [lo, hi] per link.
type TransitStubConfig struct {
	TransitDomains    int // default 10
	TransitRouters    int // routers per transit domain, default 5
	StubsPerTransit   int // stub domains per transit router, default 10
	StubRouters       int // routers per stub domain, default 10
	InterTransitDelay [2]int32
	IntraTransitDelay [2]int32
	TransitStubDelay  [2]int32
	IntraStubDelay    [2]int32
	AccessDelay       [2]int32
}

// DefaultTransitStub is the paper's shape: 10 transit domains of 5 routers,
// each transit router with 10 stub domains of 10 routers, 5,050 routers in
// all. The delays are our choice (the paper does not give the generator's):
// 20-40 ms between transit domains, 5-15 ms inside one, 2-6 ms from a stub
// to its transit router, 1-3 ms inside a stub, 0.2-1 ms from an end node to
// its stub router.
var DefaultTransitStub = TransitStubConfig{
	TransitDomains: 10, TransitRouters: 5, StubsPerTransit: 10, StubRouters: 10,
	InterTransitDelay: [2]int32{20000, 40000},
	IntraTransitDelay: [2]int32{5000, 15000},
	TransitStubDelay:  [2]int32{2000, 6000},
	IntraStubDelay:    [2]int32{1000, 3000},
	AccessDelay:       [2]int32{200, 1000},
}

type adj struct {
	to, link int32
	w        int32
}

// TransitStub is a router graph with end nodes attached to random stub
// routers. Router-to-router delays are shortest-path delays, precomputed for
// every pair; links 0..RouterLinks-1 are router links, and link
// RouterLinks+a is node a's access link.
type TransitStub struct {
	routers     int
	adj         [][]adj
	RouterLinks int
	dist        []int32 // routers x routers shortest-path delay
	pred        []int16 // routers x routers predecessor on the shortest path tree of the row's source
	attach      []int32 // router of each end node
	access      []int32 // access link delay of each end node
	stubFirst   int32   // routers below this index are transit routers
}

// NewTransitStub generates a topology with cfg's shape and attaches nodes end
// nodes to uniformly random stub routers.
func NewTransitStub(r *rand.Rand, cfg TransitStubConfig, nodes int) (*TransitStub, error) {
	nt := cfg.TransitDomains * cfg.TransitRouters
	ns := nt * cfg.StubsPerTransit * cfg.StubRouters
	if nt < 1 || cfg.StubRouters < 1 || cfg.StubsPerTransit < 1 || nt+ns > 32767 {
		return nil, fmt.Errorf("transit-stub topology: %d transit and %d stub routers: want 1..32767 in all", nt, ns)
	}
	t := &TransitStub{routers: nt + ns, adj: make([][]adj, nt+ns), stubFirst: int32(nt)}
	link := func(a, b int, d [2]int32) {
		w := d[0] + r.Int32N(d[1]-d[0]+1)
		id := int32(t.RouterLinks)
		t.RouterLinks++
		t.adj[a] = append(t.adj[a], adj{to: int32(b), link: id, w: w})
		t.adj[b] = append(t.adj[b], adj{to: int32(a), link: id, w: w})
	}
	// Transit domains: a random tree plus extra edges, then the domains
	// joined by a random tree of domains plus extra inter-domain edges.
	for d := 0; d < cfg.TransitDomains; d++ {
		base := d * cfg.TransitRouters
		randomGraph(r, cfg.TransitRouters, 0.5, func(a, b int) { link(base+a, base+b, cfg.IntraTransitDelay) })
	}
	randomGraph(r, cfg.TransitDomains, 0.3, func(a, b int) {
		link(a*cfg.TransitRouters+r.IntN(cfg.TransitRouters), b*cfg.TransitRouters+r.IntN(cfg.TransitRouters), cfg.InterTransitDelay)
	})
	// Stub domains: a random tree plus extra edges, one router linked to
	// the domain's transit router.
	next := nt
	for tr := 0; tr < nt; tr++ {
		for s := 0; s < cfg.StubsPerTransit; s++ {
			base := next
			randomGraph(r, cfg.StubRouters, 0.2, func(a, b int) { link(base+a, base+b, cfg.IntraStubDelay) })
			link(tr, base+r.IntN(cfg.StubRouters), cfg.TransitStubDelay)
			next += cfg.StubRouters
		}
	}
	t.shortestPaths()
	t.attach = make([]int32, nodes)
	t.access = make([]int32, nodes)
	for i := range nodes {
		t.attach[i] = int32(nt + r.IntN(ns))
		t.access[i] = cfg.AccessDelay[0] + r.Int32N(cfg.AccessDelay[1]-cfg.AccessDelay[0]+1)
	}
	return t, nil
}

// randomGraph calls edge for a connected random graph on n vertices: a random
// tree, plus every other pair with probability p.
func randomGraph(r *rand.Rand, n int, p float64, edge func(a, b int)) {
	inTree := make(map[[2]int]bool)
	for i := 1; i < n; i++ {
		j := r.IntN(i)
		inTree[[2]int{j, i}] = true
		edge(j, i)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if !inTree[[2]int{i, j}] && r.Float64() < p {
				edge(i, j)
			}
		}
	}
}

// shortestPaths runs Dijkstra from every router.
func (t *TransitStub) shortestPaths() {
	n := t.routers
	t.dist = make([]int32, n*n)
	t.pred = make([]int16, n*n)
	h := &distHeap{}
	for s := 0; s < n; s++ {
		dist, pred := t.dist[s*n:(s+1)*n], t.pred[s*n:(s+1)*n]
		for i := range dist {
			dist[i], pred[i] = -1, -1
		}
		dist[s] = 0
		h.items = h.items[:0]
		h.push(0, int32(s))
		for len(h.items) > 0 {
			d, u := h.pop()
			if d > dist[u] {
				continue
			}
			for _, e := range t.adj[u] {
				nd := d + e.w
				if dist[e.to] < 0 || nd < dist[e.to] {
					dist[e.to], pred[e.to] = nd, int16(u)
					h.push(nd, e.to)
				}
			}
		}
	}
}

// Nodes implements Network.
func (t *TransitStub) Nodes() int { return len(t.attach) }

// Routers is the number of routers.
func (t *TransitStub) Routers() int { return t.routers }

// NumLinks implements LinkNetwork.
func (t *TransitStub) NumLinks() int { return t.RouterLinks + len(t.attach) }

// Router implements LinkNetwork.
func (t *TransitStub) Router(a scribe.Addr) int32 { return t.attach[a] }

// AccessLink implements LinkNetwork.
func (t *TransitStub) AccessLink(a scribe.Addr) int32 { return int32(t.RouterLinks) + int32(a) }

// Distance implements scribe.Proximity: access delays plus the shortest
// router path delay.
func (t *TransitStub) Distance(a, b scribe.Addr) int64 {
	if a == b {
		return 0
	}
	ra, rb := t.attach[a], t.attach[b]
	return int64(t.access[a]) + int64(t.dist[int(ra)*t.routers+int(rb)]) + int64(t.access[b])
}

// Links implements LinkNetwork: a's access link, the router path, b's access link.
func (t *TransitStub) Links(a, b scribe.Addr, fn func(link int32)) {
	if a == b {
		return
	}
	fn(t.AccessLink(a))
	t.routerPath(t.attach[a], t.attach[b], fn)
	fn(t.AccessLink(b))
}

// routerPath calls fn with each link on the shortest path from router s to d.
func (t *TransitStub) routerPath(s, d int32, fn func(link int32)) {
	pred := t.pred[int(s)*t.routers : int(s+1)*t.routers]
	for cur := d; cur != s; {
		p := int32(pred[cur])
		fn(t.linkBetween(p, cur))
		cur = p
	}
}

func (t *TransitStub) linkBetween(a, b int32) int32 {
	best, bw := int32(-1), int32(0)
	for _, e := range t.adj[a] {
		if e.to == b && (best < 0 || e.w < bw) {
			best, bw = e.link, e.w
		}
	}
	return best
}

// RouterTree implements LinkNetwork.
func (t *TransitStub) RouterTree(src int32, dst []int32, fn func(link int32)) {
	seen := make(map[int32]bool, len(dst)*2)
	pred := t.pred[int(src)*t.routers : int(src+1)*t.routers]
	for _, d := range dst {
		for cur := d; cur != src && !seen[cur]; {
			seen[cur] = true
			p := int32(pred[cur])
			fn(t.linkBetween(p, cur))
			cur = p
		}
	}
}

// distHeap is a min-heap of (distance, router) for Dijkstra.
type distHeap struct{ items []distItem }

type distItem struct{ d, v int32 }

func (h *distHeap) push(d, v int32) {
	h.items = append(h.items, distItem{d, v})
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if h.items[p].d <= h.items[i].d {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *distHeap) pop() (int32, int32) {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.items) && h.items[l].d < h.items[m].d {
			m = l
		}
		if r < len(h.items) && h.items[r].d < h.items[m].d {
			m = r
		}
		if m == i {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return top.d, top.v
}
