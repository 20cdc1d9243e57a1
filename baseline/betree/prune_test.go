package betree

import (
	"testing"

	"github.com/sift-pubsub/sift/baseline/internal/num"
	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// evaluations returns the number of subscriptions Match evaluates in full
// for e: those of every l-node it visits.
func (x *Index) evaluations(n *cnode, e match.Event) int {
	total := len(n.leaf)
	for _, p := range n.pdir {
		v, present := e.Get(p.attr)
		k, ok := num.Of(v)
		if !present || !ok {
			continue
		}
		for d := p.root; d != nil; d = d.childOf(k) {
			total += x.evaluations(d.node, e)
		}
	}
	return total
}

// TestPrunes: on HEM workloads of narrow ranges the directories spare
// most evaluations (a scan evaluates every subscription): under a fifth
// at width 0.1 and under a third at the default 0.3, averaged over the
// workload's events.
func TestPrunes(t *testing.T) {
	const subs = 20_000
	for _, c := range []struct{ width, most float64 }{{0.1, 0.2}, {0.3, 1.0 / 3}} {
		w, err := workload.HEM(workload.HEMConfig{Subscriptions: subs, Events: 100, Width: c.width}, 1)
		if err != nil {
			t.Fatal(err)
		}
		x, _ := New(Config{})
		for i, f := range w.Filters {
			if err := x.Insert(match.ID(i), f); err != nil {
				t.Fatal(err)
			}
		}
		total := 0
		for _, e := range w.Events {
			total += x.evaluations(x.root, e)
		}
		share := float64(total) / float64(len(w.Events)) / subs
		t.Logf("width %.1f: %.1f%% of the subscriptions evaluated per event", c.width, 100*share)
		if share >= c.most {
			t.Errorf("width %.1f: %.1f%% evaluated per event, want under %.0f%%", c.width, 100*share, 100*c.most)
		}
	}
}
