package mesh

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// advertSim is the simulation's record of the clients' advertisements
// (keyed like subscriptions: router, client, ref).
type advertSim struct {
	ads   map[subKey]match.Filter // live advertisements
	ready map[subKey]bool
	topo  map[subKey]int // sim.topo when each advertisement was made
	// ever holds, per link end, every advertisement its router received
	// on it (link sessions are never reused).
	ever map[end][]match.Filter
}

// newAdvertSim is newSim with advertisements on at every router.
func newAdvertSim(t fataler, names []string, table string) *sim {
	return newAdvertSimPart(t, names, table, 0)
}

// newAdvertSimPart is newAdvertSim with the routers' Config.SnapshotPart
// (newPartsSim).
func newAdvertSimPart(t fataler, names []string, table string, part int) *sim {
	s := newSimPart(t, names, table, part)
	s.adv = &advertSim{ads: map[subKey]match.Filter{}, ready: map[subKey]bool{}, topo: map[subKey]int{}, ever: map[end][]match.Filter{}}
	s.runs = 0
	for i, n := range names {
		s.routers[i] = s.start(n)
	}
	return s
}

func (s *sim) advertise(k subKey, f match.Filter) {
	out, err := s.routers[k.router].Advertise(k.client, k.ref, f)
	if err != nil {
		s.t.Fatal(err)
	}
	s.adv.ads[k] = f
	s.adv.topo[k] = s.topo
	s.dispatch(k.router, out)
}

func (s *sim) unadvertise(k subKey) {
	out, err := s.routers[k.router].Unadvertise(k.client, k.ref)
	if err != nil {
		s.t.Fatal(err)
	}
	delete(s.adv.ads, k)
	delete(s.adv.ready, k)
	s.dispatch(k.router, out)
}

// advertRestart forgets the advertisements of a router's clients: they
// were connected to the run that is gone.
func (s *sim) advertRestart(r int) {
	if s.adv == nil {
		return
	}
	for k := range s.adv.ads {
		if k.router == r {
			delete(s.adv.ads, k)
			delete(s.adv.ready, k)
		}
	}
}

// advertReady records an advertisement's Ready and, if the topology did
// not change since it was made, checks the promise: every subscription of
// its component that is Ready (made with the topology unchanged too) gets
// every grid event that matches both, published at the advertiser's
// router.
func (s *sim) advertReady(r int, rd Ready) {
	k := subKey{r, rd.Client, rd.Ref}
	s.logf("ready %s client=%d advert=%d", s.name(r), rd.Client, rd.Ref)
	if _, live := s.adv.ads[k]; !live {
		s.t.Fatalf("%s: Ready for client %d advertisement %d, which is not advertised", s.name(r), rd.Client, rd.Ref)
	}
	if s.adv.ready[k] {
		s.t.Fatalf("%s: Ready twice for client %d advertisement %d", s.name(r), rd.Client, rd.Ref)
	}
	s.adv.ready[k] = true
	if s.adv.topo[k] != s.topo || s.noCheck {
		return
	}
	comp, cycle := s.tryComponents()
	if cycle != "" {
		return
	}
	for sk, f := range s.subs {
		if comp[sk.router] != comp[r] || !s.ready[sk] || s.subTopo[sk] != s.topo {
			continue
		}
		for _, e := range gridEvents {
			if f.Matches(e) && s.adv.ads[k].Matches(e) && s.publish(r, e)[sk] == 0 {
				s.t.Fatalf("advertisement %v (%s) ready but %s published at %s misses ready %v (%s)", k, s.adv.ads[k], e, s.name(r), sk, f)
			}
		}
	}
}

// conforms reports whether a client at router p may publish e: always
// without advertisements, else when e matches one of the advertisements
// made there (with readyOnly, only those Ready and made with the topology
// unchanged: the ones a Ready subscription is promised events from).
func (s *sim) conforms(p int, e match.Event, readyOnly bool) bool {
	if s.adv == nil {
		return true
	}
	for k, f := range s.adv.ads {
		if k.router != p || !f.Matches(e) {
			continue
		}
		if !readyOnly || (s.adv.ready[k] && s.adv.topo[k] == s.topo) {
			return true
		}
	}
	return false
}

// noteAdverts records the advertisements in msg, delivered to end e.
func (s *sim) noteAdverts(e end, msg wire.Message) {
	if a, ok := msg.(*wire.Adverts); ok && s.adv != nil {
		for _, text := range a.Add {
			s.adv.ever[e] = append(s.adv.ever[e], match.MustParse(text))
		}
	}
}

// checkAdvertsQuiet checks, with no message in flight and advertisements
// on, at every router and link: the advertisements received are exactly
// those made at the routers beyond the link (brute force over the
// links); every filter sent overlaps one received on that link session
// (withdrawals take nothing back); and what is sent holds the table's
// forwarding set restricted to the filters that overlap the current
// advertisements (recomputed from scratch, against the incremental state)
// and is within the table's forwarding set.
func (s *sim) checkAdvertsQuiet() {
	if s.adv == nil {
		return
	}
	for r, m := range s.routers {
		for _, lr := range m.Routes() {
			want := s.advertsBeyond(r, lr.Link)
			if !slices.Equal(lr.AdvertsReceived, want) {
				s.t.Fatalf("%s holds adverts %q from %s, want %q", s.name(r), lr.AdvertsReceived, lr.Peer, want)
			}
			var ads []match.Filter
			for _, text := range want {
				ads = append(ads, match.MustParse(text))
			}
			table := texts(m.table.Forwarded(m.links[lr.Link].slot))
			for _, f := range m.table.Forwarded(m.links[lr.Link].slot) {
				if overlapsAny(f, ads) && !slices.Contains(lr.Forwarded, f.String()) {
					s.t.Fatalf("%s does not send %s to %s, which advertised %q", s.name(r), f, lr.Peer, want)
				}
			}
			for _, text := range lr.Forwarded {
				if !overlapsAny(match.MustParse(text), s.adv.ever[end{r, lr.Link}]) {
					s.t.Fatalf("%s sent %s to %s, which never advertised anything overlapping it", s.name(r), text, lr.Peer)
				}
				if !slices.Contains(table, text) {
					s.t.Fatalf("%s sends %s to %s, which its table does not forward there (%q)", s.name(r), text, lr.Peer, table)
				}
			}
		}
	}
}

// advertsBeyond returns, sorted and distinct, the canonical texts of the
// advertisements made at the routers reached over link l of router r.
func (s *sim) advertsBeyond(r int, l Link) []string {
	c, k := s.find(r, l)
	if c == nil {
		s.t.Fatalf("%s: link %d is not connected", s.name(r), l)
	}
	seen := map[int]bool{r: true}
	todo := []int{c.ends[1-k].router}
	for len(todo) > 0 {
		x := todo[0]
		todo = todo[1:]
		if seen[x] {
			continue
		}
		seen[x] = true
		for _, o := range s.conns {
			if o.ends[0].link == 0 || o.ends[1].link == 0 {
				continue
			}
			for j := range o.ends {
				if o.ends[j].router == x {
					todo = append(todo, o.ends[1-j].router)
				}
			}
		}
	}
	set := map[string]bool{}
	for k, f := range s.adv.ads {
		if seen[k.router] && k.router != r {
			set[f.String()] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func describeAdverts(m *wire.Adverts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "adverts seq=%d", m.Seq)
	if m.Snapshot {
		b.WriteString(" snapshot")
	}
	for _, f := range m.Remove {
		b.WriteString(" -(" + f + ")")
	}
	for _, f := range m.Add {
		b.WriteString(" +(" + f + ")")
	}
	return b.String()
}
