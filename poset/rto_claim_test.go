package poset

import (
	"errors"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestClaimedPlacementProperty drives the shallow forest with inserts whose
// parent is claimed (honestly: a live subscription covering the filter;
// falsely: any live subscription; or naming an id never given or deleted),
// plain inserts and deletes, and checks after every step the shallow
// forest's invariants, Match against Scan (no lost match, nothing extra),
// and that a claim is placed exactly when the named parent is held and
// covers the filter.
func TestClaimedPlacementProperty(t *testing.T) {
	events := allEvents()
	for _, classic := range []bool{true, false} {
		t.Run(map[bool]string{true: "classic", false: "indexed"}[classic], func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				defer forceKids(t)()
				s := NewShallow(Config{Classic: classic})
				if !classic {
					forceIndex(s.core)
				}
				scan := match.NewScan()
				from := map[match.ID]Iface{}
				filters := map[match.ID]match.Filter{}
				var live []match.ID
				next := match.ID(0)
				for range rapid.IntRange(1, 40).Draw(t, "steps") {
					op := rapid.IntRange(0, 5).Draw(t, "op")
					switch {
					case op == 0 && len(live) > 0:
						i := rapid.IntRange(0, len(live)-1).Draw(t, "victim")
						if err := s.Delete(live[i]); err != nil {
							t.Fatal(err)
						}
						scan.Delete(live[i])
						live = slices.Delete(live, i, i+1)
					default:
						f := genFilter().Draw(t, "filter")
						iface := Iface(rapid.IntRange(0, 2).Draw(t, "from"))
						parent := claimFor(t, f, live, filters, next)
						had := s.byText.get(f.String()) != nil
						held := s.byID[parent]
						st, err := s.AddClaimed(next, iface, f, parent)
						if err != nil {
							t.Fatal(err)
						}
						fresh := !had && match.Satisfiable(f)
						wantPlaced := fresh && held != nil && Covers(held.filter(), f)
						if st.Placed != wantPlaced || st.Refused != (fresh && !wantPlaced) {
							t.Fatalf("claim %d for %s: %+v, want placed %v", parent, f, st, wantPlaced)
						}
						if st.Placed && s.byID[next].parents()[0] != held {
							t.Fatalf("placed %s below %s, not the claimed %s", f, s.byID[next].parents()[0].text, held.text)
						}
						scan.Insert(next, f)
						from[next], filters[next] = iface, f
						live = append(live, next)
						next++
					}
					if err := checkShallow(s); err != nil {
						t.Fatalf("%v\n%s", err, s.core)
					}
					if err := checkMatch(s.core, scan, from, events); err != nil {
						t.Fatalf("%v\n%s", err, s.core)
					}
				}
				for _, id := range live {
					if err := s.Delete(id); err != nil {
						t.Fatal(err)
					}
				}
				if s.Nodes() != 0 || s.roots.len() != 0 || s.Len() != 0 {
					t.Fatalf("not empty after deleting everything:\n%s", s.core)
				}
			})
		})
	}
}

// claimFor draws the parent a client claims for f: a live subscription
// covering f (honest), any live one (a lie, unless it happens to cover),
// one deleted or never given, in about equal shares.
func claimFor(t *rapid.T, f match.Filter, live []match.ID, filters map[match.ID]match.Filter, next match.ID) match.ID {
	switch rapid.IntRange(0, 3).Draw(t, "claim") {
	case 0:
		for _, id := range live {
			if Covers(filters[id], f) {
				return id
			}
		}
	case 1:
		if len(live) > 0 {
			return rapid.SampledFrom(live).Draw(t, "lie")
		}
	case 2:
		if next > 0 {
			return match.ID(rapid.IntRange(0, int(next)-1).Draw(t, "old"))
		}
	}
	return next + 1000 // never given
}

// TestTableClaimedForwarding checks the routing table under claims, honest
// and false, from clients and neighbours alike: every step's updates are
// well formed, the neighbours hold exactly what the table says it
// forwarded, and every event is forwarded to exactly the neighbours beyond
// which a matching subscription exists (checkTable), so a lying claim
// loses no event.
func TestTableClaimedForwarding(t *testing.T) {
	events := allEvents()
	neighbours := []Iface{1, 2, 3}
	rapid.Check(t, func(t *rapid.T) {
		tab, err := NewTable(TableConfig{Structure: "shallow", Neighbours: neighbours})
		if err != nil {
			t.Fatal(err)
		}
		subscribed := map[Iface][]match.Filter{}
		subscribe := func(from Iface, f match.Filter) ([]Update, error) {
			parent := genFilter().Draw(t, "unheld parent")
			if own := subscribed[from]; len(own) > 0 && rapid.IntRange(0, 3).Draw(t, "held") > 0 {
				parent = rapid.SampledFrom(own).Draw(t, "parent")
				if rapid.Bool().Draw(t, "honest") {
					for _, g := range own {
						if Covers(g, f) {
							parent = g
							break
						}
					}
				}
			}
			subscribed[from] = append(subscribed[from], f)
			us, st, err := tab.SubscribeClaimed(from, f, parent)
			if st.Placed && (tab.Count(from, parent) == 0 || !Covers(parent, f)) {
				t.Fatalf("claim of %s over %s from %d placed: not held or not covering", parent, f, from)
			}
			return us, err
		}
		view, live, cur := driveTable(t, tab, neighbours, 7, genFilter(), subscribe,
			func(us []Update, view neighbourView, live []tableSubRec, cur []Iface) {
				checkUpdatesWellFormed(t, us, cur)
				view.apply(t, us)
				checkTable(t, tab, view, live, cur, events, false)
			})
		for _, s := range live {
			us, err := tab.Unsubscribe(s.from, s.f)
			if err != nil {
				t.Fatal(err)
			}
			view.apply(t, us)
		}
		for _, nb := range cur {
			if len(view[nb]) != 0 {
				t.Fatalf("neighbour %d still holds %v", nb, view[nb])
			}
		}
		if tab.Len() != 0 || tab.s.Nodes() != 0 {
			t.Fatalf("table not empty:\n%s", tab.Structure())
		}
	})
}

// TestClaimNeedsShallow: the poset and the forest refuse claims, changing
// nothing.
func TestClaimNeedsShallow(t *testing.T) {
	f := match.MustParse(`a > 1`)
	for _, st := range structures {
		c := st.make(Config{})
		if _, err := c.AddClaimed(1, 0, f, 0); !errors.Is(err, errClaimStructure) {
			t.Fatalf("%s: AddClaimed: %v, want the shallow forest named", st.name, err)
		}
		if c.Len() != 0 {
			t.Fatalf("%s: a refused claim changed the structure", st.name)
		}
	}
	tab, err := NewTable(TableConfig{Structure: "forest"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tab.SubscribeClaimed(0, f, f); !errors.Is(err, errClaimStructure) || tab.Len() != 0 {
		t.Fatalf("forest table: SubscribeClaimed: %v (len %d), want a refusal", err, tab.Len())
	}
}

// TestShallowCoverer: Coverer names a subscription whose filter covers
// the one asked about whenever a root covers it, and nothing otherwise.
func TestShallowCoverer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := NewShallow(Config{})
		filters := map[match.ID]match.Filter{}
		for i := range rapid.IntRange(0, 20).Draw(t, "n") {
			f := genFilter().Draw(t, "filter")
			if err := s.Add(match.ID(i), 0, f); err != nil {
				t.Fatal(err)
			}
			filters[match.ID(i)] = f
		}
		f := genFilter().Draw(t, "asked")
		id, ok := s.Coverer(f)
		want := false
		for _, r := range s.roots.members() {
			want = want || match.Satisfiable(f) && Covers(r.filter(), f)
		}
		if ok != want || ok && !Covers(filters[id], f) {
			t.Fatalf("Coverer(%s) = %d, %v; want found %v with a covering filter\n%s", f, id, ok, want, s.core)
		}
	})
}
