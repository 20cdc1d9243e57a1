package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// MeshDemoOptions configure MeshDemo; zero fields take the defaults
// beside them.
type MeshDemoOptions struct {
	Events int    // events published, split between two publishers (default 10,000)
	Seed   uint64 // workload seed (default 1)
	// Mode names the forwarding mode in the title ("exact" by default);
	// Configure, if set, applies it to every router's configuration.
	Mode      string
	Configure func(*router.Config)
}

// The demo's tree: r2 is the hub; r1 and r3 host the publishers, r2 and
// r4 the subscribers.
var (
	meshNames = []string{"r1", "r2", "r3", "r4"}
	meshEdges = []local.Edge{{A: 0, B: 1}, {A: 1, B: 2}, {A: 1, B: 3}}
)

// Origin and sequence attributes the demo adds to every event, so each
// subscriber can check per-publisher order. No filter names them.
const (
	originAttr = "demo_origin"
	seqAttr    = "demo_seq"
)

// meshSub is one subscribing client of the mesh demo.
type meshSub struct {
	router int
	name   string
	filter match.Filter
	mu     sync.Mutex
	got    []match.Event
	ends   sync.WaitGroup // one per publisher's end marker
	client *client.Client
}

// meshPub is one publishing client and the events it publishes.
type meshPub struct {
	router int
	name   string
	events []match.Event
}

// MeshDemo starts four routers in one process linked over QUIC on
// loopback (r1 - r2 - r3 with r4 also on r2), publishers at r1 and r3,
// subscribers at r2 and r4; publishes the stock sample; checks every
// subscriber received exactly what its filter matches, once, in
// per-publisher order; and prints per-link event counts, which show where
// events were filtered out.
func MeshDemo(out io.Writer, opts MeshDemoOptions) error {
	opts = opts.withDefaults()
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 100, Events: opts.Events}, opts.Seed)
	if err != nil {
		return fmt.Errorf("mesh demo: %w", err)
	}
	dir, err := os.MkdirTemp("", "sift-mesh-demo")
	if err != nil {
		return fmt.Errorf("mesh demo: %w", err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m, err := local.StartMesh(ctx, dir, meshNames, meshEdges, func(_ int, cfg *router.Config) {
		if opts.Configure != nil {
			opts.Configure(cfg)
		}
	})
	if err != nil {
		return fmt.Errorf("mesh demo: %w", err)
	}
	defer m.Stop()
	fmt.Fprintf(out, "%s forwarding: routers r1 - r2 - r3, r4 - r2 (QUIC on loopback); publishers at r1 and r3, subscribers at r2 and r4\n", opts.Mode)

	pubs := splitPublishers(w.Events)
	subs := meshSubscribers(w)
	for _, s := range subs {
		if err := s.subscribe(ctx, m, len(pubs)); err != nil {
			return err
		}
		defer s.client.Close()
	}
	start := time.Now()
	if err := publishAll(ctx, m, pubs); err != nil {
		return err
	}
	if err := waitEnds(ctx, subs); err != nil {
		return err
	}
	elapsed := time.Since(start)
	if err := checkMeshSubs(out, subs, pubs); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d events published and delivered in %v\n", len(w.Events), elapsed.Round(time.Millisecond))
	return printLinkCounts(out, m, pubs)
}

func (o MeshDemoOptions) withDefaults() MeshDemoOptions {
	if o.Events <= 0 {
		o.Events = 10000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Mode == "" {
		o.Mode = "exact"
	}
	return o
}

// splitPublishers deals the events alternately to a publisher at r1 and
// one at r3, tagging each with its origin and sequence number.
func splitPublishers(events []match.Event) []*meshPub {
	pubs := []*meshPub{{router: 0, name: "pub-r1"}, {router: 2, name: "pub-r3"}}
	for i, e := range events {
		p := pubs[i%len(pubs)]
		attrs := make([]match.Attr, 0, e.Len()+2)
		for j := range e.Len() {
			attrs = append(attrs, e.At(j))
		}
		attrs = append(attrs, match.Attr{Name: originAttr, Value: match.Str(p.name)},
			match.Attr{Name: seqAttr, Value: match.Int(int64(len(p.events)))})
		p.events = append(p.events, match.MustEvent(attrs...))
	}
	return pubs
}

// meshSubscribers are the demo's subscribers: a sector desk at the hub,
// a block-trade watcher and two single-symbol traders at r4.
func meshSubscribers(w workload.Workload) []*meshSub {
	subs := []*meshSub{
		{router: 1, name: "energy-desk@r2", filter: match.MustParse(`sector == "energy"`)},
		{router: 3, name: "blocks@r4", filter: match.MustParse(`volume >= 40000`)},
	}
	for i, f := range traders(w, 2) {
		subs = append(subs, &meshSub{router: 3, name: fmt.Sprintf("trader-%d@r4", i+1), filter: f})
	}
	return subs
}

// subscribe connects s to its router and subscribes its filter and the end
// marker; it returns once both are installed across the mesh.
func (s *meshSub) subscribe(ctx context.Context, m *local.Mesh, publishers int) error {
	s.ends.Add(publishers)
	c, err := m.Routers[s.router].Dial(ctx, s.name, client.Options{OnEvent: func(_ *client.Subscription, e match.Event) {
		if _, ok := e.Get(endAttr); ok {
			s.ends.Done()
			return
		}
		s.mu.Lock()
		s.got = append(s.got, e)
		s.mu.Unlock()
	}})
	if err != nil {
		return fmt.Errorf("mesh demo: %w", err)
	}
	s.client = c
	for _, f := range []string{s.filter.String(), endAttr + " exists"} {
		if _, err := c.Subscribe(ctx, f); err != nil {
			return fmt.Errorf("mesh demo: %s: %w", s.name, err)
		}
	}
	return nil
}

// publishAll runs every publisher at once, each ending with a marker.
func publishAll(ctx context.Context, m *local.Mesh, pubs []*meshPub) error {
	errs := make(chan error, len(pubs))
	for _, p := range pubs {
		go func() { errs <- p.publish(ctx, m) }()
	}
	for range pubs {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

func (p *meshPub) publish(ctx context.Context, m *local.Mesh) error {
	c, err := m.Routers[p.router].Dial(ctx, p.name, client.Options{})
	if err != nil {
		return fmt.Errorf("mesh demo: %w", err)
	}
	defer c.Close()
	marker := match.MustEvent(match.Attr{Name: endAttr, Value: match.Bool(true)})
	if err := c.Publish(ctx, append(p.events, marker)...); err != nil {
		return fmt.Errorf("mesh demo: %s: %w", p.name, err)
	}
	if err := c.Flush(ctx); err != nil {
		return fmt.Errorf("mesh demo: %s: %w", p.name, err)
	}
	return nil
}

// waitEnds waits until every subscriber has every publisher's marker.
func waitEnds(ctx context.Context, subs []*meshSub) error {
	for _, s := range subs {
		done := make(chan struct{})
		go func() { s.ends.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			return fmt.Errorf("mesh demo: %s did not receive every end marker: %w", s.name, ctx.Err())
		}
	}
	return nil
}

// checkMeshSubs prints each subscriber's deliveries and checks them
// against the filter: exactly the matching events of every publisher,
// once each, in that publisher's order.
func checkMeshSubs(out io.Writer, subs []*meshSub, pubs []*meshPub) error {
	fmt.Fprintf(out, "\n%-15s %-55s %10s  %s\n", "subscriber", "filter", "deliveries", "vs filter")
	var failed error
	for _, s := range subs {
		s.mu.Lock()
		got := s.got
		s.mu.Unlock()
		check := "ok: each matching event once, in publisher order"
		if err := s.check(got, pubs); err != nil {
			check, failed = "FAILED: "+err.Error(), fmt.Errorf("mesh demo: %s: %w", s.name, err)
		}
		fmt.Fprintf(out, "%-15s %-55s %10d  %s\n", s.name, s.filter, len(got), check)
	}
	fmt.Fprintln(out)
	return failed
}

// check compares got with the events of pubs that match s's filter.
func (s *meshSub) check(got []match.Event, pubs []*meshPub) error {
	next := map[string]int{} // per origin: index into that publisher's matching events
	want := map[string][]match.Event{}
	total := 0
	for _, p := range pubs {
		for _, e := range p.events {
			if s.filter.Matches(e) {
				want[p.name] = append(want[p.name], e)
				total++
			}
		}
	}
	for _, e := range got {
		v, _ := e.Get(originAttr)
		origin := v.AsString()
		i := next[origin]
		if i >= len(want[origin]) || !e.Equal(want[origin][i]) {
			return fmt.Errorf("unexpected, duplicated or out-of-order event %v", e)
		}
		next[origin] = i + 1
	}
	if len(got) != total {
		return fmt.Errorf("received %d of the %d matching events", len(got), total)
	}
	return nil
}

// printLinkCounts prints, per directed link, how many events crossed it
// out of those that reached its sending router.
func printLinkCounts(out io.Writer, m *local.Mesh, pubs []*meshPub) error {
	reached := make([]float64, len(m.Routers)) // published at or received by each router
	for _, p := range pubs {
		reached[p.router] += float64(len(p.events) + 1)
	}
	for i, env := range m.Routers {
		for _, peer := range m.Neighbours(i) {
			v, err := counterValue(env.Router, peer, "in")
			if err != nil {
				return err
			}
			reached[i] += v
		}
	}
	fmt.Fprintf(out, "%-10s %8s  %s\n", "link", "events", "filtered out (of the events that reached the sender)")
	for i, env := range m.Routers {
		for _, peer := range m.Neighbours(i) {
			sent, err := counterValue(env.Router, peer, "out")
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%-10s %8.0f  %s\n", env.Router.Name()+" -> "+peer, sent, filteredShare(sent, reached[i]))
		}
	}
	return nil
}

func filteredShare(sent, reached float64) string {
	if reached == 0 {
		return "-"
	}
	return fmt.Sprintf("%5.1f%% of %.0f", 100*(1-sent/reached), reached)
}

// counterValue reads r's event counter for the link to peer in dir.
func counterValue(r *router.Router, peer, dir string) (float64, error) {
	var pb dto.Metric
	if err := r.Metrics().LinkEvents.WithLabelValues(peer, dir).Write(&pb); err != nil {
		return 0, fmt.Errorf("mesh demo: link counter: %w", err)
	}
	return pb.GetCounter().GetValue(), nil
}
