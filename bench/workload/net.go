package workload

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/sift-pubsub/sift/match"
)

// Network workload kinds: what a broker benchmark (sift bench net) sends
// through a mesh of routers and against a subject-based broker.
const (
	// NetTopic subscriptions are `symbol == "X"`: expressible as the
	// subject trades.X of a subject-based broker such as NATS.
	NetTopic = "topic"
	// NetContent subscriptions are price bands and symbol prefixes with a
	// volume floor: no subject expresses them, so a subject-based broker
	// carries every event (subject trades.>) to every subscriber, which
	// filters in the application.
	NetContent = "content"
)

// NetKinds lists the network workload kinds.
func NetKinds() []string { return []string{NetTopic, NetContent} }

// NetConfig configures a network workload: stock trade events (as in
// Stock) and a few subscribers, each matching about Selectivity of the
// events. A zero field takes the default written beside it.
type NetConfig struct {
	// Kind is NetTopic or NetContent (default NetTopic).
	Kind string
	// Subscribers is the number of subscribers, one filter each
	// (default 10).
	Subscribers int
	// Events is the number of distinct events (default 100,000).
	Events int
	// Symbols is the number of listed symbols (default 2,000).
	Symbols int
	// Selectivity is the share of events each subscriber should match
	// (default 0.01); the filters are calibrated on the generated events.
	Selectivity float64
}

// Defaults of NetConfig.
const (
	DefaultNetSubscribers = 10
	DefaultNetEvents      = 100_000
	DefaultNetSelectivity = 0.01
)

func (c NetConfig) withDefaults() NetConfig {
	if c.Kind == "" {
		c.Kind = NetTopic
	}
	if c.Subscribers == 0 {
		c.Subscribers = DefaultNetSubscribers
	}
	if c.Events == 0 {
		c.Events = DefaultNetEvents
	}
	if c.Symbols == 0 {
		c.Symbols = DefaultStockSymbols
	}
	if c.Selectivity == 0 {
		c.Selectivity = DefaultNetSelectivity
	}
	return c
}

// Resolved returns the configuration with every default filled in.
func (c NetConfig) Resolved() NetConfig { return c.withDefaults() }

// Validate reports why the configuration (after defaults) cannot be
// generated, or nil.
func (c NetConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case !slices.Contains(NetKinds(), c.Kind):
		return fmt.Errorf("net workload: kind %q is not one of %s", c.Kind, strings.Join(NetKinds(), ", "))
	case c.Subscribers < 1 || c.Subscribers > 1000:
		return fmt.Errorf("net workload: %d subscribers outside [1, 1000]", c.Subscribers)
	case c.Events < 100:
		return fmt.Errorf("net workload: %d events: at least 100 are needed to calibrate the filters", c.Events)
	case c.Symbols < 1 || c.Symbols > 200_000:
		return fmt.Errorf("net workload: %d symbols outside [1, 200000]", c.Symbols)
	case !(c.Selectivity > 0 && c.Selectivity <= 0.2):
		return fmt.Errorf("net workload: selectivity %v outside (0, 0.2]", c.Selectivity)
	}
	return nil
}

// NetSub is one subscriber of a network workload: its filter, and the
// subject a subject-based broker subscribes with (for NetContent the
// wildcard trades.>, the application then applying Filter).
type NetSub struct {
	Filter  match.Filter
	Subject string
}

// NetWorkload is a generated network workload.
type NetWorkload struct {
	Kind   string
	Events []match.Event
	Subs   []NetSub
}

// Net generates the network workload for cfg and seed. The events are
// Stock's events for the same seed and symbol count; subscriber filters
// are calibrated on them so that each matches about cfg.Selectivity of
// the events (Selectivities measures the exact shares).
func Net(cfg NetConfig, seed uint64) (NetWorkload, error) {
	if err := cfg.Validate(); err != nil {
		return NetWorkload{}, err
	}
	cfg = cfg.withDefaults()
	u := newUniverse(newRand(seed, streamUniverse), cfg.Symbols, DefaultStockSymbolSkew)
	events := stockEvents(newRand(seed, streamEvents), u, StockConfig{Events: cfg.Events, Volatility: DefaultStockVolatility})
	w := NetWorkload{Kind: cfg.Kind, Events: events}
	r := newRand(seed, streamFilters)
	for i := range cfg.Subscribers {
		var sub NetSub
		if cfg.Kind == NetTopic {
			sub = topicSub(events, cfg.Selectivity, i)
		} else {
			sub = contentSub(r, events, cfg.Selectivity, i)
		}
		w.Subs = append(w.Subs, sub)
	}
	return w, nil
}

// Selectivities returns, per subscriber, the share of the events its
// filter matches.
func (w NetWorkload) Selectivities() []float64 {
	out := make([]float64, len(w.Subs))
	for i, s := range w.Subs {
		n := 0
		for _, e := range w.Events {
			if s.Filter.Matches(e) {
				n++
			}
		}
		out[i] = float64(n) / float64(len(w.Events))
	}
	return out
}

// NetSubject is the subject of an event on a subject-based broker:
// trades.SYMBOL, with the dots of a symbol (BRK.B) turned into
// underscores since a dot separates subject tokens.
func NetSubject(e match.Event) string {
	v, _ := e.Get("symbol")
	return "trades." + strings.ReplaceAll(v.AsString(), ".", "_")
}

// NetSubjectAll is the subject that receives every event.
const NetSubjectAll = "trades.>"

// topicSub subscribes subscriber i to the i-th symbol, among those traded,
// whose share of the events is closest to sel.
func topicSub(events []match.Event, sel float64, i int) NetSub {
	counts := map[string]int{}
	for _, e := range events {
		v, _ := e.Get("symbol")
		counts[v.AsString()]++
	}
	type share struct {
		sym  string
		dist float64
	}
	var shares []share
	for s, n := range counts {
		d := float64(n)/float64(len(events)) - sel
		shares = append(shares, share{s, max(d, -d)})
	}
	slices.SortFunc(shares, func(a, b share) int {
		return cmp.Or(cmp.Compare(a.dist, b.dist), strings.Compare(a.sym, b.sym))
	})
	sym := shares[i%len(shares)].sym
	f := match.MustFilter(c("symbol", match.OpEq, match.Str(sym)))
	return NetSub{Filter: f, Subject: NetSubject(match.MustEvent(match.Attr{Name: "symbol", Value: match.Str(sym)}))}
}

// contentSub alternates price bands (`price >= L && price < H` holding
// sel of the events, at a random place in the price distribution) and
// prefix blocks (`symbol prefix "P" && volume >= V`, V chosen so that sel
// of the events match).
func contentSub(r *rand.Rand, events []match.Event, sel float64, i int) NetSub {
	if i%2 == 0 {
		return NetSub{Filter: priceBandSub(r, events, sel), Subject: NetSubjectAll}
	}
	return NetSub{Filter: prefixVolumeSub(r, events, sel), Subject: NetSubjectAll}
}

func priceBandSub(r *rand.Rand, events []match.Event, sel float64) match.Filter {
	prices := make([]float64, len(events))
	for j, e := range events {
		v, _ := e.Get("price")
		prices[j] = v.AsFloat()
	}
	slices.Sort(prices)
	k := max(1, int(sel*float64(len(prices))))
	lo := r.IntN(len(prices) - k)
	return match.MustFilter(
		c("price", match.OpGe, match.MustFloat(prices[lo])),
		c("price", match.OpLt, match.MustFloat(prices[lo+k])),
	)
}

// prefixVolumeSub picks a one-letter symbol prefix held by at least twice
// sel of the events, and the volume floor that leaves about sel of the
// events.
func prefixVolumeSub(r *rand.Rand, events []match.Event, sel float64) match.Filter {
	byPrefix := map[string][]int64{}
	for _, e := range events {
		s, _ := e.Get("symbol")
		v, _ := e.Get("volume")
		p := s.AsString()[:1]
		byPrefix[p] = append(byPrefix[p], v.AsInt())
	}
	k := max(1, int(sel*float64(len(events))))
	all := slices.Sorted(maps.Keys(byPrefix))
	var prefixes []string
	for _, p := range all {
		if len(byPrefix[p]) >= 2*k {
			prefixes = append(prefixes, p)
		}
	}
	if len(prefixes) == 0 { // tiny workloads: the commonest prefix
		common := slices.MaxFunc(all, func(a, b string) int { return cmp.Compare(len(byPrefix[a]), len(byPrefix[b])) })
		prefixes = []string{common}
	}
	p := prefixes[r.IntN(len(prefixes))]
	vols := byPrefix[p]
	slices.SortFunc(vols, func(a, b int64) int { return cmp.Compare(b, a) })
	floor := vols[min(k, len(vols))-1]
	return match.MustFilter(
		c("symbol", match.OpPrefix, match.Str(p)),
		c("volume", match.OpGe, match.Int(floor)),
	)
}
