package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// DemoOptions configure Demo; zero fields take the defaults beside them.
type DemoOptions struct {
	Events int    // events published (default 20,000)
	Desk   int    // subscriptions of the "desk" client (default 1,000)
	Seed   uint64 // workload seed (default 1)
}

// demoClient is one subscriber of the demo and what it received.
type demoClient struct {
	name    string
	filters []match.Filter
	mu      sync.Mutex
	got     []match.Event
	end     chan struct{} // closed when the end marker arrives
}

// endAttr marks the demo's last event; every client subscribes to it, so
// its arrival means everything published before it has arrived too.
const endAttr = "demo_end"

// Demo starts a router on a loopback port with certificates in a temporary
// folder, subscribes a few clients with different filters, publishes the
// stock sample workload from one publisher, and prints who got what
// (checked against match.Scan) and the rates.
func Demo(out io.Writer, opts DemoOptions) error {
	if opts.Events <= 0 {
		opts.Events = 20000
	}
	if opts.Desk <= 0 {
		opts.Desk = 1000
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	w, err := workload.Stock(workload.StockConfig{Subscriptions: opts.Desk, Events: opts.Events}, opts.Seed)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	dir, err := os.MkdirTemp("", "sift-demo")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer os.RemoveAll(dir)
	env, err := local.Start(dir, nil)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer env.Stop()
	fmt.Fprintf(out, "router %s listening on %s (QUIC, mutual TLS; certificates in a temporary folder)\n\n", env.Router.Name(), env.Addr)

	clients := []*demoClient{
		{name: "tape", filters: []match.Filter{match.MustParse(`volume exists`)}},
		{name: "desk", filters: w.Filters},
	}
	for i, f := range traders(w, 3) {
		clients = append(clients, &demoClient{name: fmt.Sprintf("trader-%d", i+1), filters: []match.Filter{f}})
	}
	ctx := context.Background()
	for _, dc := range clients {
		if err := dc.subscribe(ctx, env); err != nil {
			return err
		}
	}
	pub, err := env.Dial(ctx, "publisher", client.Options{})
	if err != nil {
		return err
	}
	defer pub.Close()
	start := time.Now()
	if err := pub.Publish(ctx, w.Events...); err != nil {
		return fmt.Errorf("demo: publish: %w", err)
	}
	if err := pub.Flush(ctx); err != nil {
		return fmt.Errorf("demo: publish: %w", err)
	}
	accepted := time.Since(start)
	if err := pub.Publish(ctx, match.MustEvent(match.Attr{Name: endAttr, Value: match.Bool(true)})); err != nil {
		return fmt.Errorf("demo: publish: %w", err)
	}
	if err := pub.Flush(ctx); err != nil {
		return fmt.Errorf("demo: publish: %w", err)
	}
	timeout := time.After(time.Minute)
	for _, dc := range clients {
		select {
		case <-dc.end:
		case <-timeout:
			return fmt.Errorf("demo: %s did not receive everything within a minute", dc.name)
		}
	}
	return report(out, clients, w.Events, accepted, start)
}

// traders picks n subscriptions of the workload that match at least one of
// its events, so every trader has something to show.
func traders(w workload.Workload, n int) []match.Filter {
	var out []match.Filter
	for _, f := range w.Filters {
		for _, e := range w.Events {
			if f.Matches(e) {
				out = append(out, f)
				break
			}
		}
		if len(out) == n {
			break
		}
	}
	return out
}

func (dc *demoClient) subscribe(ctx context.Context, env *local.Env) error {
	dc.end = make(chan struct{})
	c, err := env.Dial(ctx, dc.name, client.Options{OnEvent: func(_ *client.Subscription, e match.Event) {
		if _, ok := e.Get(endAttr); ok {
			close(dc.end)
			return
		}
		dc.mu.Lock()
		dc.got = append(dc.got, e)
		dc.mu.Unlock()
	}})
	if err != nil {
		return err
	}
	for _, f := range slices.Concat(dc.filters, []match.Filter{match.MustParse(endAttr + " exists")}) {
		if _, err := c.Subscribe(ctx, f.String()); err != nil {
			return fmt.Errorf("demo: %s: %w", dc.name, err)
		}
	}
	return nil
}

// want returns the (event, subscription) pairs Scan finds for dc.
func (dc *demoClient) want(events []match.Event) int {
	scan := match.NewScan()
	for i, f := range dc.filters {
		scan.Insert(match.ID(i), f)
	}
	n := 0
	var dst []match.ID
	for _, e := range events {
		dst = scan.Match(e, dst[:0])
		n += len(dst)
	}
	return n
}

// report prints who got what against Scan, and the rates.
func report(out io.Writer, clients []*demoClient, events []match.Event, accepted time.Duration, start time.Time) error {
	wants := make([]int, len(clients))
	for i, dc := range clients {
		wants[i] = dc.want(events)
	}
	all := time.Since(start)
	fmt.Fprintf(out, "%-9s %6s  %10s  %-8s  %s\n", "client", "subs", "deliveries", "vs scan", "first filter / first event received")
	total := 0
	for i, dc := range clients {
		n := dc.count()
		total += n
		check := "ok"
		if n != wants[i] {
			check = fmt.Sprintf("WANT %d", wants[i])
		}
		first := "-"
		if n > 0 {
			first = dc.got[0].String()
		}
		fmt.Fprintf(out, "%-9s %6d  %10d  %-8s  %s\n%37s%s\n", dc.name, len(dc.filters), n, check, dc.filters[0], "", first)
	}
	fmt.Fprintf(out, "\n%d events published, accepted in %v (%.0f events/s); %d deliveries in %v (%.0f/s)\n",
		len(events), accepted.Round(time.Millisecond), float64(len(events))/accepted.Seconds(),
		total, all.Round(time.Millisecond), float64(total)/all.Seconds())
	for i, dc := range clients {
		if dc.count() != wants[i] {
			return fmt.Errorf("demo: %s received %d deliveries, Scan says %d", dc.name, dc.count(), wants[i])
		}
	}
	return nil
}

func (dc *demoClient) count() int {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	return len(dc.got)
}
