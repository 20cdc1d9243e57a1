package workload

import (
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

func TestNetDeterministicAndCalibrated(t *testing.T) {
	for _, kind := range NetKinds() {
		cfg := NetConfig{Kind: kind, Events: 20_000}
		a, err := Net(cfg, 7)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Net(cfg, 7)
		c, _ := Net(cfg, 8)
		if !sameNet(a, b) {
			t.Fatalf("%s: same seed, different workloads", kind)
		}
		if sameNet(a, c) {
			t.Fatalf("%s: different seeds, same workload", kind)
		}
		if len(a.Subs) != DefaultNetSubscribers || len(a.Events) != 20_000 {
			t.Fatalf("%s: %d subscribers, %d events", kind, len(a.Subs), len(a.Events))
		}
		for i, sel := range a.Selectivities() {
			if sel < 0.004 || sel > 0.025 {
				t.Errorf("%s: subscriber %d (%s) matches %.2f%% of events, want about 1%%", kind, i, a.Subs[i].Filter, sel*100)
			}
		}
	}
}

// TestNetSubjects: topic subscribers' subjects select exactly the events
// their filter matches; content subscribers take every event.
func TestNetSubjects(t *testing.T) {
	w, err := Net(NetConfig{Kind: NetTopic, Events: 5000}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range w.Subs {
		for _, e := range w.Events {
			if (NetSubject(e) == s.Subject) != s.Filter.Matches(e) {
				t.Fatalf("subject %s and filter %s disagree on %v", s.Subject, s.Filter, e)
			}
		}
	}
	if got := NetSubject(match.MustEvent(match.Attr{Name: "symbol", Value: match.Str("BRK.B")})); got != "trades.BRK_B" {
		t.Errorf("subject of BRK.B: %s", got)
	}
	c, _ := Net(NetConfig{Kind: NetContent, Events: 5000}, 1)
	kinds := map[bool]int{}
	for _, s := range c.Subs {
		if s.Subject != NetSubjectAll {
			t.Errorf("content subscriber subject %s", s.Subject)
		}
		kinds[strings.Contains(s.Filter.String(), "prefix")]++
	}
	if kinds[true] == 0 || kinds[false] == 0 {
		t.Errorf("content filters are not a mix of prefixes and price bands: %v", kinds)
	}
}

func TestNetInvalid(t *testing.T) {
	for _, cfg := range []NetConfig{
		{Kind: "bogus"}, {Subscribers: -1}, {Events: 10}, {Selectivity: 0.5}, {Symbols: -2},
	} {
		if _, err := Net(cfg, 1); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

func sameNet(a, b NetWorkload) bool {
	if len(a.Events) != len(b.Events) || len(a.Subs) != len(b.Subs) {
		return false
	}
	for i := range a.Events {
		if !a.Events[i].Equal(b.Events[i]) {
			return false
		}
	}
	return slices.EqualFunc(a.Subs, b.Subs, func(x, y NetSub) bool { return x.Filter.Equal(y.Filter) && x.Subject == y.Subject })
}
