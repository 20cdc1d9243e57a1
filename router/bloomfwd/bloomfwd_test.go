package bloomfwd

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/match/bloom/bloomtest"
	"github.com/sift-pubsub/sift/router/mesh"
)

// TestTermWireRoundTrip: every term of random filters survives the wire
// text with its key, in both term modes.
func TestTermWireRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range []bloom.Params{{}, {Flat: true}} {
		for range 2000 {
			for _, term := range p.Terms(bloomtest.RandomFilter(rng)) {
				got, err := parseTerm(p, toWire(term))
				if err != nil {
					t.Fatalf("%s: %v", term, err)
				}
				if got.String() != term.String() || got.Key() != term.Key() {
					t.Fatalf("round trip of %s: %s", term, got)
				}
			}
		}
	}
}

func TestParseTermRefuses(t *testing.T) {
	for _, tc := range []struct {
		p    bloom.Params
		w    wire.BloomTerm
		want string
	}{
		{bloom.Params{}, wire.BloomTerm{C: `a ==`}, "term constraint"},
		{bloom.Params{}, wire.BloomTerm{C: `a == 1 && b == 2`}, "2 constraints"},
		{bloom.Params{Flat: true}, wire.BloomTerm{Qual: `a == 1`, C: `b < 2`}, "terms are flat"},
		{bloom.Params{}, wire.BloomTerm{Qual: `a == 1`, C: `b == 2`}, "never qualified"},
		{bloom.Params{}, wire.BloomTerm{Qual: `a < 1`, C: `b < 2`}, "not an equality"},
		{bloom.Params{}, wire.BloomTerm{Qual: `a <`, C: `b < 2`}, "term qualifier"},
	} {
		if _, err := parseTerm(tc.p, tc.w); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.w, err, tc.want)
		}
	}
}

func TestCheckHello(t *testing.T) {
	def := WireParams(bloom.Params{})
	other := WireParams(bloom.Params{K: 4})
	for _, tc := range []struct {
		own, theirs *wire.BloomParams
		want        string
	}{
		{nil, nil, ""},
		{def, WireParams(bloom.Params{M: 1024, K: 3}), ""},
		{def, other, "bloom parameters differ: this router has m=1024 k=3 seed=0 terms=qualified hash=" + bloom.HashFamily + ", peer p has m=1024 k=4"},
		{nil, def, "this router forwards exact, peer p forwards bloom (m=1024"},
		{def, nil, "forwards bloom (m=1024 k=3 seed=0 terms=qualified hash=" + bloom.HashFamily + "), peer p forwards exact"},
	} {
		err := CheckHello(tc.own, "p", tc.theirs)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckHello(%v, %v) = %v, want %q", tc.own, tc.theirs, err, tc.want)
		}
	}
	if err := (Config{Index: "btree"}).Validate(); err == nil {
		t.Error("index btree accepted")
	}
	if err := (Config{Params: bloom.Params{M: 100}}).Validate(); err == nil {
		t.Error("m = 100 accepted")
	}
}

// TestDictBadInputChangesNothing: refused updates leave the dictionary and
// its flood untouched.
func TestDictBadInputChangesNothing(t *testing.T) {
	d, err := NewDict(Config{})
	if err != nil {
		t.Fatal(err)
	}
	d.LinkUp(1)
	d.LinkUp(2)
	if _, err := d.Receive(1, &wire.BloomTerms{Add: []wire.BloomTerm{{C: `x == 1`}}}); err != nil {
		t.Fatal(err)
	}
	before := d.Terms()
	for _, m := range []*wire.BloomTerms{
		{Add: []wire.BloomTerm{{C: `y == 1`}, {C: `x == 1`}}},               // already held
		{Add: []wire.BloomTerm{{C: `y == 1`}, {C: `y ==`}}},                 // unparsable
		{Remove: []wire.BloomTerm{{C: `z == 1`}}},                           // not held
		{Add: []wire.BloomTerm{{C: `y == 1`}, {C: `y == 1`}}},               // twice
		{Add: []wire.BloomTerm{{C: `y == 1`}, {Qual: `y < 1`, C: `a < 1`}}}, // bad qualifier
	} {
		if _, err := d.Receive(1, m); err == nil {
			t.Fatalf("%+v accepted", m)
		}
		if got := d.Terms(); !slices.Equal(got, before) {
			t.Fatalf("refused %+v changed the terms to %q", m, got)
		}
	}
	if _, err := d.RemoveFilter(match.MustParse(`x == 1`)); err == nil {
		t.Fatal("removed a local filter that was never added")
	}
	// A term held from link 1 goes to link 2 only; removing it there
	// sends the removal to link 2 only.
	out, err := d.Receive(1, &wire.BloomTerms{Remove: []wire.BloomTerm{{C: `x == 1`}}})
	if err != nil || len(out) != 1 || out[0].Link != 2 || len(out[0].Msg.(*wire.BloomTerms).Remove) != 1 {
		t.Fatalf("removal sent %+v, %v", out, err)
	}
}

// TestDictFlood: a local term goes to every link; a term from a link goes
// to the others only; a second source sends nothing; a snapshot replaces.
func TestDictFlood(t *testing.T) {
	d, _ := NewDict(Config{})
	d.LinkUp(1)
	d.LinkUp(2)
	sent := func(out []mesh.Send) map[mesh.Link]string {
		m := map[mesh.Link]string{}
		for _, s := range out {
			bt := s.Msg.(*wire.BloomTerms)
			var parts []string
			for _, a := range bt.Add {
				parts = append(parts, "+"+a.C)
			}
			for _, r := range bt.Remove {
				parts = append(parts, "-"+r.C)
			}
			m[s.Link] = strings.Join(parts, " ")
		}
		return m
	}
	check := func(what string, got, want map[mesh.Link]string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: sent %v, want %v", what, got, want)
		}
		for l, w := range want {
			if got[l] != w {
				t.Fatalf("%s: sent %v, want %v", what, got, want)
			}
		}
	}
	check("local", sent(d.AddFilter(match.MustParse(`a == 1`))), map[mesh.Link]string{1: "+a == 1", 2: "+a == 1"})
	out, _ := d.Receive(1, &wire.BloomTerms{Add: []wire.BloomTerm{{C: `b == 1`}, {C: `a == 1`}}})
	check("from 1", sent(out), map[mesh.Link]string{2: "+b == 1"})
	out, _ = d.Receive(2, &wire.BloomTerms{Add: []wire.BloomTerm{{C: `b == 1`}}})
	check("b from 2 as well", sent(out), map[mesh.Link]string{1: "+b == 1"})
	out, _ = d.Receive(1, &wire.BloomTerms{Snapshot: true, Add: []wire.BloomTerm{{C: `c == 1`}}})
	check("snapshot from 1", sent(out), map[mesh.Link]string{2: "+c == 1 -b == 1"})
	check("link 2 down", sent(d.LinkDown(2)), map[mesh.Link]string{1: "-b == 1"})
	if got := d.Terms(); !slices.Equal(got, []string{"a == 1", "c == 1"}) {
		t.Fatalf("terms %q", got)
	}
}
