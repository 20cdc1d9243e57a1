package mesh

import (
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// subscribeBatch subscribes fs at k.router for k.client as one batch from
// ref k.ref.
func (s *sim) subscribeBatch(k subKey, fs []match.Filter) {
	out, err := s.routers[k.router].SubscribeBatch(k.client, k.ref, fs)
	if err != nil {
		s.t.Fatal(err)
	}
	if s.batches == nil {
		s.batches = map[subKey]int{}
	}
	s.batches[k] = len(fs)
	for i, f := range fs {
		m := subKey{k.router, k.client, k.ref + uint64(i)}
		s.subs[m] = f
		s.subTopo[m] = s.topo
	}
	s.dispatch(k.router, out)
}

// batchReady marks every member of a batch ready and checks each is
// installed on every router of its component.
func (s *sim) batchReady(r int, rd Ready) {
	k := subKey{r, rd.Client, rd.Ref}
	n, ok := s.batches[k]
	if !ok {
		s.t.Fatalf("%s: batch Ready for client %d ref %d, which started no batch (or twice)", s.name(r), rd.Client, rd.Ref)
	}
	delete(s.batches, k)
	s.logf("ready %s client=%d batch=%d+%d", s.name(r), rd.Client, rd.Ref, n)
	for i := range n {
		m := subKey{r, rd.Client, rd.Ref + uint64(i)}
		if _, live := s.subs[m]; !live {
			continue // unsubscribed meanwhile
		}
		s.ready[m] = true
		if s.subTopo[m] == s.topo && !s.noCheck {
			s.checkInstalled(m)
		}
	}
}

// TestSubscribeBatchLikeSingles: batches of subscriptions at the far end
// of a - b - c leave every router holding exactly what the same filters
// subscribed one by one leave, with one message per link per batch, one
// Ready per batch, and every member installed everywhere when it comes.
func TestSubscribeBatchLikeSingles(t *testing.T) {
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 300, Events: 1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"poset", "shallow"} {
		t.Run(table, func(t *testing.T) {
			one, many := newSim(t, []string{"a", "b", "c"}, table), newSim(t, []string{"a", "b", "c"}, table)
			for _, s := range []*sim{one, many} {
				if s.connect(0, 1) != nil || s.connect(1, 2) != nil {
					t.Fatal("link refused")
				}
				s.quiesce()
			}
			for i, f := range w.Filters {
				one.subscribe(subKey{2, 1, uint64(i + 1)}, f)
			}
			one.settle()
			for first := 0; first < len(w.Filters); first += 100 {
				out := len(many.conns[1].q[0]) + len(many.conns[1].q[1])
				many.subscribeBatch(subKey{2, 1, uint64(first + 1)}, w.Filters[first:first+100])
				if sent := len(many.conns[1].q[0]) + len(many.conns[1].q[1]) - out; sent != 1 {
					t.Fatalf("batch from %d: %d messages on c's link, want 1", first, sent)
				}
			}
			many.settle()
			if len(many.batches) != 0 {
				t.Fatalf("batches never ready: %v", many.batches)
			}
			for r := range one.routers {
				a, b := one.routers[r].Routes(), many.routers[r].Routes()
				for i := range a {
					if !slices.Equal(a[i].Received, b[i].Received) || !slices.Equal(a[i].Forwarded, b[i].Forwarded) {
						t.Fatalf("%s link %s: singles and batches differ", one.name(r), a[i].Peer)
					}
				}
			}
		})
	}
}

// TestSubscribeBatchRefusals: an empty batch is an error that installs
// nothing and sends nothing. (Refs in use are the caller's to refuse: the
// Mesh keeps no map of its clients' subscriptions.)
func TestSubscribeBatchRefusals(t *testing.T) {
	s := newSim(t, []string{"a", "b"}, "poset")
	if s.connect(0, 1) != nil {
		t.Fatal("link refused")
	}
	s.quiesce()
	s.subscribe(subKey{1, 1, 5}, match.MustParse(`x > 1`))
	s.quiesce()
	m := s.routers[1]
	before := m.Len()
	out, err := m.SubscribeBatch(1, 1, nil)
	if err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty batch: %v, want an error containing %q", err, "empty")
	}
	if len(out.Sends)+len(out.Ready) != 0 || m.Len() != before {
		t.Error("empty batch: refused but changed something")
	}
}

// TestUnsubscribeUnheldFilter: unsubscribing with a filter the client's
// interface does not hold (a caller's mistake) is an error that changes
// nothing and sends nothing; the subscription it named is still there
// and still removable with its own filter.
func TestUnsubscribeUnheldFilter(t *testing.T) {
	s := newSim(t, []string{"a", "b"}, "shallow")
	if s.connect(0, 1) != nil {
		t.Fatal("link refused")
	}
	s.quiesce()
	k := subKey{1, 1, 5}
	s.subscribe(k, match.MustParse(`x > 1`))
	s.quiesce()
	m := s.routers[1]
	before, beforePeer := m.Len(), s.routers[0].Len()
	for _, c := range []struct {
		client Client
		f      string
	}{{1, `x > 2`}, {2, `x > 1`}} {
		out, err := m.Unsubscribe(c.client, k.ref, match.MustParse(c.f))
		if err == nil {
			t.Errorf("client %d unsubscribing %q: accepted", c.client, c.f)
		}
		if len(out.Sends)+len(out.Ready)+len(out.Close) != 0 || m.Len() != before {
			t.Errorf("client %d unsubscribing %q: refused but changed something", c.client, c.f)
		}
	}
	s.unsubscribe(k)
	s.quiesce()
	if m.Len() != before-1 || s.routers[0].Len() != beforePeer-1 {
		t.Fatalf("after the real unsubscribe: b holds %d (was %d), a %d (was %d)", m.Len(), before, s.routers[0].Len(), beforePeer)
	}
	s.checkQuiet()
}
