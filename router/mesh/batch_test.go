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

// TestSubscribeBatchRefusals: an empty batch, or one reusing a ref, is an
// error that installs nothing and sends nothing.
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
	for _, c := range []struct {
		first uint64
		fs    []match.Filter
		want  string
	}{
		{1, nil, "empty"},
		{3, []match.Filter{match.MustParse(`y > 1`), match.MustParse(`y > 2`), match.MustParse(`y > 3`)}, "subscription 5 exists"},
	} {
		out, err := m.SubscribeBatch(1, c.first, c.fs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("batch from %d: %v, want an error containing %q", c.first, err, c.want)
		}
		if len(out.Sends)+len(out.Ready) != 0 || m.Len() != before || len(m.clients[1]) != 1 {
			t.Errorf("batch from %d: refused but changed something", c.first)
		}
	}
}
