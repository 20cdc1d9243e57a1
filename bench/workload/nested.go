package workload

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/sift-pubsub/sift/match"
)

// NestedConfig configures the nested workload: a covering-heavy set of
// trade subscriptions, where a few broad filters cover many narrow ones
// and narrow price bands nest inside each other, as covering-based routing
// tables (package poset) need to be measured on. A zero field takes the
// default written beside it.
//
// Subscriptions, by share: `symbol == X` (BroadSymbolPercent, default
// 2%), a symbol-less price band `price >= c-w && price <= c+w` with c
// uniform in [0, 1000) and w uniform in [100, 500] (BroadPricePercent,
// default 3%), and otherwise `symbol == X && price >= c-w && price <=
// c+w` with w log-uniform in [0.5, 500], so bands nest often. Symbols are
// S00, S01, ... drawn uniformly; bounds are rounded to cents (a band may
// start below zero). Events are
// trades with a symbol and a price uniform in [0, 1000).
type NestedConfig struct {
	// Subscriptions is the number of subscriptions (default 10,000).
	Subscriptions int
	// Events is the number of trade events (default 1,000).
	Events int
	// Symbols is the number of symbols (default 50).
	Symbols int
	// BroadSymbolPercent is the share of `symbol == X` filters (default 2;
	// negative means 0).
	BroadSymbolPercent int
	// BroadPricePercent is the share of symbol-less price bands (default
	// 3; negative means 0).
	BroadPricePercent int
}

// Defaults of NestedConfig.
const (
	DefaultNestedSubscriptions = 10_000
	DefaultNestedSymbols       = 50
	DefaultNestedBroadSymbol   = 2
	DefaultNestedBroadPrice    = 3
)

func (c NestedConfig) withDefaults() NestedConfig {
	if c.Subscriptions == 0 {
		c.Subscriptions = DefaultNestedSubscriptions
	}
	if c.Events == 0 {
		c.Events = DefaultEvents
	}
	if c.Symbols == 0 {
		c.Symbols = DefaultNestedSymbols
	}
	pct := func(p *int, def int) {
		switch {
		case *p == 0:
			*p = def
		case *p < 0:
			*p = 0
		}
	}
	pct(&c.BroadSymbolPercent, DefaultNestedBroadSymbol)
	pct(&c.BroadPricePercent, DefaultNestedBroadPrice)
	return c
}

// Resolved returns the configuration with every default filled in.
func (c NestedConfig) Resolved() NestedConfig { return c.withDefaults() }

// Validate reports why the configuration (after defaults) cannot be
// generated, or nil.
func (c NestedConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Subscriptions < 0 || c.Events < 0:
		return fmt.Errorf("nested: negative count (subscriptions %d, events %d)", c.Subscriptions, c.Events)
	case c.Symbols < 1 || c.Symbols > 10_000:
		return fmt.Errorf("nested: %d symbols outside [1, 10000]", c.Symbols)
	case c.BroadSymbolPercent+c.BroadPricePercent > 100:
		return fmt.Errorf("nested: broad shares %d%% + %d%% exceed 100%%", c.BroadSymbolPercent, c.BroadPricePercent)
	}
	return nil
}

// Nested generates the nested workload for cfg and seed.
func Nested(cfg NestedConfig, seed uint64) (Workload, error) {
	if err := cfg.Validate(); err != nil {
		return Workload{}, err
	}
	cfg = cfg.withDefaults()
	return Workload{
		Filters: nestedFilters(newRand(seed, streamFilters), cfg),
		Events:  nestedEvents(newRand(seed, streamEvents), cfg),
	}, nil
}

func nestedFilters(r *rand.Rand, cfg NestedConfig) []match.Filter {
	out := make([]match.Filter, cfg.Subscriptions)
	for i := range out {
		var cs []match.Constraint
		switch k := r.IntN(100); {
		case k < cfg.BroadSymbolPercent:
			cs = []match.Constraint{symbolIs(nestedSymbol(r, cfg.Symbols))}
		case k < cfg.BroadSymbolPercent+cfg.BroadPricePercent:
			cs = nestedBand(1000*r.Float64(), 100+400*r.Float64())
		default:
			width := 0.5 * math.Pow(1000, r.Float64())
			cs = append(nestedBand(1000*r.Float64(), width), symbolIs(nestedSymbol(r, cfg.Symbols)))
		}
		out[i] = match.MustFilter(cs...)
	}
	return out
}

func nestedEvents(r *rand.Rand, cfg NestedConfig) []match.Event {
	out := make([]match.Event, cfg.Events)
	for i := range out {
		out[i] = match.MustEvent(
			match.Attr{Name: "symbol", Value: match.Str(nestedSymbol(r, cfg.Symbols))},
			match.Attr{Name: "price", Value: match.MustFloat(roundCents(1000 * r.Float64()))},
		)
	}
	return out
}

// nestedSymbol draws one of n symbols named S00, S01, ... uniformly.
func nestedSymbol(r *rand.Rand, n int) string { return fmt.Sprintf("S%02d", r.IntN(n)) }

func symbolIs(s string) match.Constraint {
	return match.Constraint{Attr: "symbol", Op: match.OpEq, Val: match.Str(s)}
}

// nestedBand is `price >= c-w && price <= c+w`, bounds rounded to cents
// and not clamped at zero: clamping would give many bands the same lower
// bound and turn them into long chains, which is another workload.
func nestedBand(c, w float64) []match.Constraint {
	cents := func(x float64) float64 { return math.Round(x*100) / 100 }
	return []match.Constraint{
		{Attr: "price", Op: match.OpGe, Val: match.MustFloat(cents(c - w))},
		{Attr: "price", Op: match.OpLe, Val: match.MustFloat(cents(c + w))},
	}
}
