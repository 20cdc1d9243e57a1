package router_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/perm"
)

// batchDeliveries collects a batch's deliveries: per event (in delivery
// order) the matching positions.
type batchDeliveries struct {
	mu   sync.Mutex
	got  [][]int
	evs  []match.Event
	more chan struct{}
}

func (d *batchDeliveries) on(subs []int, e match.Event) {
	d.mu.Lock()
	d.got = append(d.got, slices.Clone(subs))
	d.evs = append(d.evs, e)
	d.mu.Unlock()
	select {
	case d.more <- struct{}{}:
	default:
	}
}

func (d *batchDeliveries) wait(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		d.mu.Lock()
		have := len(d.got)
		d.mu.Unlock()
		if have >= n {
			return
		}
		select {
		case <-d.more:
		case <-deadline:
			t.Fatalf("%d of %d deliveries", have, n)
		}
	}
}

// TestSubscribeBatchThroughChain: 5,000 stock filters subscribed at c of
// a - b - c in batches (several frames) are installed everywhere when
// SubscribeBatch returns: events published at a reach exactly the
// matching filters, by Scan, in publish order, each event once with all
// its matching positions; the shallow table and the poset agree.
// SubscribeBatchProgress reports the frames acknowledged, growing to all.
func TestSubscribeBatchThroughChain(t *testing.T) {
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 5000, Events: 2000}, 11)
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(w.Filters))
	scan := match.NewScan()
	for i, f := range w.Filters {
		texts[i] = f.String()
		scan.Insert(match.ID(i), f)
	}
	for _, table := range []string{"poset", "shallow"} {
		t.Run(table, func(t *testing.T) {
			a, _, c := startChain(t, func(cfg *router.Config) { cfg.Table = table })
			d := &batchDeliveries{more: make(chan struct{}, 1)}
			sub := dial(t, c, "batch", client.Options{})
			var acked []int // SubscribeBatchProgress's calls, serialised
			if _, err := sub.SubscribeBatchProgress(testCtx(t), texts, d.on, func(n int) { acked = append(acked, n) }); err != nil {
				t.Fatal(err)
			}
			grows := len(acked) >= 2 // 5,000 filters take two frames
			for i := 1; i < len(acked); i++ {
				grows = grows && acked[i] > acked[i-1]
			}
			if !grows || acked[len(acked)-1] != len(texts) {
				t.Fatalf("progress %v: want counts growing frame by frame up to %d", acked, len(texts))
			}
			var want [][]int
			var wantEvs []match.Event
			for _, e := range w.Events {
				if ids := match.SortIDs(scan.Match(e, nil)); len(ids) > 0 {
					pos := make([]int, len(ids))
					for i, id := range ids {
						pos[i] = int(id)
					}
					want, wantEvs = append(want, pos), append(wantEvs, e)
				}
			}
			if len(want) < 100 {
				t.Fatalf("only %d events match: weak test", len(want))
			}
			pub := dial(t, a, "pub", client.Options{})
			if err := pub.Publish(testCtx(t), w.Events...); err != nil {
				t.Fatal(err)
			}
			if err := pub.Flush(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			d.wait(t, len(want))
			time.Sleep(100 * time.Millisecond) // nothing more may come
			d.mu.Lock()
			defer d.mu.Unlock()
			if len(d.got) != len(want) {
				t.Fatalf("%d deliveries, want %d", len(d.got), len(want))
			}
			for i := range want {
				if !slices.Equal(d.got[i], want[i]) || !d.evs[i].Equal(wantEvs[i]) {
					t.Fatalf("delivery %d: %v %s, want %v %s", i, d.got[i], d.evs[i], want[i], wantEvs[i])
				}
			}
		})
	}
}

// TestSubscribeBatchRefused: a batch with a malformed filter, one past
// the connection's limit, or one reusing ids is refused whole with an
// error naming the problem, installs nothing, and keeps the connection
// usable.
func TestSubscribeBatchRefused(t *testing.T) {
	env := start(t, func(cfg *router.Config) { cfg.MaxSubscriptionsPerConn = 10 })
	d := &batchDeliveries{more: make(chan struct{}, 1)}
	c := dial(t, env, "batch", client.Options{})
	good := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("x == %d", i))
		}
		return out
	}
	if _, err := c.SubscribeBatch(testCtx(t), append(good(3), "x === 1", "y > 2"), d.on); err == nil ||
		!strings.Contains(err.Error(), "filter 3 of the batch") || wire.CodeOf(err) != wire.CodeBadFilter {
		t.Fatalf("malformed filter: %v", err)
	}
	if _, err := c.SubscribeBatch(testCtx(t), good(11), d.on); err == nil || !strings.Contains(err.Error(), "exceed") {
		t.Fatalf("11 filters with a limit of 10: %v", err)
	}
	if got := env.Router.Metrics(); metricValue(got.Subscriptions) != 0 {
		t.Fatalf("%v subscriptions after refusals, want 0", metricValue(got.Subscriptions))
	}
	if _, err := c.SubscribeBatch(testCtx(t), good(10), d.on); err != nil {
		t.Fatalf("10 filters after the refusals: %v", err)
	}
	if _, err := c.Subscribe(testCtx(t), "x == 1"); err == nil || wire.CodeOf(err) != wire.CodeTooManySubscriptions {
		t.Fatalf("an 11th subscription: %v", err)
	}
	pub := dial(t, env, "pub", client.Options{})
	if err := pub.Publish(testCtx(t), match.MustEvent(match.Attr{Name: "x", Value: match.Int(4)})); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	d.wait(t, 1)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !slices.Equal(d.got[0], []int{4}) {
		t.Fatalf("delivered to %v, want [4]", d.got[0])
	}
}

// TestSubscribeBatchForbidden: with permissions, a batch holding one
// filter outside the client's subscribe filter is refused whole
// (CodeForbidden, naming the filter) and installs nothing; a batch within
// it is installed.
func TestSubscribeBatchForbidden(t *testing.T) {
	env := start(t, nil)
	tab, err := perm.Parse([]byte(`{"` + certs.DevClientName + `": {"subscribe": "tenant == \"a\""}}`))
	if err != nil {
		t.Fatal(err)
	}
	env.Router.SetPermissions(tab)
	d := &batchDeliveries{more: make(chan struct{}, 1)}
	c := dial(t, env, "batch", client.Options{})
	_, err = c.SubscribeBatch(testCtx(t), []string{`tenant == "a" && x > 1`, `tenant == "b"`}, d.on)
	if wire.CodeOf(err) != wire.CodeForbidden || !strings.Contains(err.Error(), "filter 1 of the batch") {
		t.Fatalf("batch with a forbidden filter: %v", err)
	}
	if n := metricValue(env.Router.Metrics().Subscriptions); n != 0 {
		t.Fatalf("%v subscriptions after the refusal, want 0", n)
	}
	if _, err := c.SubscribeBatch(testCtx(t), []string{`tenant == "a" && x > 1`, `tenant == "a"`}, d.on); err != nil {
		t.Fatalf("permitted batch: %v", err)
	}
}
