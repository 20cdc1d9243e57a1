package workload

import (
	"fmt"
	"math/rand/v2"

	"github.com/sift-pubsub/sift/match"
)

// HEMConfig configures the HEM workload (the standard synthetic workload of
// REIN, TAMA and HEM). A zero field takes the default written beside it, so
// HEMConfig{} is the published default workload with 1,000
// events and 100,000 subscriptions.
type HEMConfig struct {
	// Subscriptions is the number of subscriptions (default 100,000).
	Subscriptions int
	// Events is the number of events (default 1,000).
	Events int
	// Attributes is the number of integer attributes, named a0, a1, ...
	// (default 20).
	Attributes int
	// Predicates is the number of range predicates per subscription, each
	// on a distinct attribute (default 10; at most Attributes).
	Predicates int
	// Width is each predicate's width as a fraction of the value domain,
	// in (0, 1] (default 0.3): a predicate matches a uniform value with
	// probability Width.
	Width float64
	// Domain is the number of values: attributes take ints in [0, Domain)
	// (default 1,000,000).
	Domain int64
	// EventAttributes is the number of attributes each event gives a value
	// to (default all Attributes).
	EventAttributes int
	// AttrSkew is the Zipf exponent of attribute popularity, both for the
	// attributes subscriptions constrain and the ones events carry
	// (default 0, uniform). Attribute a0 is the most popular.
	AttrSkew float64
	// ValueSkew is the Zipf exponent of values, for event values and for
	// predicate lower bounds (default 0, uniform). Small values are the
	// most popular.
	ValueSkew float64
	// EqualityShare is the fraction of predicates that are equalities
	// `a == v` (v drawn like event values) instead of ranges, in [0, 1]
	// (default 0, all ranges).
	EqualityShare float64
}

// Defaults of HEMConfig.
const (
	DefaultHEMSubscriptions = 100_000
	DefaultEvents           = 1_000
	DefaultHEMAttributes    = 20
	DefaultHEMPredicates    = 10
	DefaultHEMWidth         = 0.3
	DefaultHEMDomain        = 1_000_000
)

// withDefaults returns c with every zero field set to its default.
func (c HEMConfig) withDefaults() HEMConfig {
	if c.Subscriptions == 0 {
		c.Subscriptions = DefaultHEMSubscriptions
	}
	if c.Events == 0 {
		c.Events = DefaultEvents
	}
	if c.Attributes == 0 {
		c.Attributes = DefaultHEMAttributes
	}
	if c.Predicates == 0 {
		c.Predicates = DefaultHEMPredicates
	}
	if c.Width == 0 {
		c.Width = DefaultHEMWidth
	}
	if c.Domain == 0 {
		c.Domain = DefaultHEMDomain
	}
	if c.EventAttributes == 0 {
		c.EventAttributes = c.Attributes
	}
	return c
}

// Validate reports why the configuration (after defaults) cannot be
// generated, or nil.
func (c HEMConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Subscriptions < 0 || c.Events < 0:
		return fmt.Errorf("hem: negative count (subscriptions %d, events %d)", c.Subscriptions, c.Events)
	case c.Attributes < 0 || c.Predicates < 0 || c.EventAttributes < 0:
		return fmt.Errorf("hem: negative attributes, predicates or event attributes")
	case c.Predicates > c.Attributes:
		return fmt.Errorf("hem: %d predicates per subscription exceed %d attributes", c.Predicates, c.Attributes)
	case c.EventAttributes > c.Attributes:
		return fmt.Errorf("hem: %d attributes per event exceed %d attributes", c.EventAttributes, c.Attributes)
	case !(c.Width > 0 && c.Width <= 1):
		return fmt.Errorf("hem: width %v outside (0, 1]", c.Width)
	case c.Domain < 1 || c.Domain > 1<<40:
		return fmt.Errorf("hem: domain %d outside [1, 2^40]", c.Domain)
	case c.AttrSkew < 0 || c.ValueSkew < 0:
		return fmt.Errorf("hem: negative skew (attributes %v, values %v)", c.AttrSkew, c.ValueSkew)
	case !(c.EqualityShare >= 0 && c.EqualityShare <= 1):
		return fmt.Errorf("hem: equality share %v outside [0, 1]", c.EqualityShare)
	}
	return nil
}

// Resolved returns the configuration with every default filled in, as the
// generator uses it (for reports).
func (c HEMConfig) Resolved() HEMConfig { return c.withDefaults() }

// HEM generates the HEM workload for cfg and seed: each subscription is
// Predicates constraints `a >= L && a <= H` on distinct attributes, with
// H - L = Width*Domain and L drawn so the range fits the domain (or, for
// an EqualityShare of them, `a == v`); each event
// gives EventAttributes attributes a value in [0, Domain).
func HEM(cfg HEMConfig, seed uint64) (Workload, error) {
	if err := cfg.Validate(); err != nil {
		return Workload{}, err
	}
	g := newHEMGen(cfg.withDefaults())
	return Workload{
		Filters: g.filters(newRand(seed, streamFilters)),
		Events:  g.events(newRand(seed, streamEvents)),
	}, nil
}

// hemGen holds the tables shared by subscription and event generation.
type hemGen struct {
	cfg    HEMConfig
	names  []string
	attrs  zipf  // attribute popularity
	lows   zipf  // predicate lower bounds in [0, Domain-span)
	values zipf  // event values in [0, Domain)
	span   int64 // H - L
}

func newHEMGen(cfg HEMConfig) *hemGen {
	names := make([]string, cfg.Attributes)
	for i := range names {
		names[i] = fmt.Sprintf("a%d", i)
	}
	span := int64(cfg.Width * float64(cfg.Domain))
	if span >= cfg.Domain {
		span = cfg.Domain - 1
	}
	return &hemGen{
		cfg:    cfg,
		names:  names,
		attrs:  newZipf(cfg.Attributes, cfg.AttrSkew),
		lows:   newZipf(int(cfg.Domain-span), cfg.ValueSkew),
		values: newZipf(int(cfg.Domain), cfg.ValueSkew),
		span:   span,
	}
}

func (g *hemGen) filters(r *rand.Rand) []match.Filter {
	out := make([]match.Filter, g.cfg.Subscriptions)
	cs := make([]match.Constraint, 0, 2*g.cfg.Predicates)
	for i := range out {
		cs = cs[:0]
		for _, a := range g.attrs.sample(r, g.cfg.Predicates) {
			// No draw at share 0, so range-only workloads stay as before.
			if g.cfg.EqualityShare > 0 && r.Float64() < g.cfg.EqualityShare {
				cs = append(cs, match.Constraint{Attr: g.names[a], Op: match.OpEq, Val: match.Int(int64(g.values.draw(r)))})
				continue
			}
			lo := int64(g.lows.draw(r))
			cs = append(cs,
				match.Constraint{Attr: g.names[a], Op: match.OpGe, Val: match.Int(lo)},
				match.Constraint{Attr: g.names[a], Op: match.OpLe, Val: match.Int(lo + g.span)})
		}
		out[i] = match.MustFilter(cs...)
	}
	return out
}

func (g *hemGen) events(r *rand.Rand) []match.Event {
	out := make([]match.Event, g.cfg.Events)
	attrs := make([]match.Attr, 0, g.cfg.EventAttributes)
	for i := range out {
		attrs = attrs[:0]
		for _, a := range g.attrs.sample(r, g.cfg.EventAttributes) {
			v := int64(g.values.draw(r))
			attrs = append(attrs, match.Attr{Name: g.names[a], Value: match.Int(v)})
		}
		out[i] = match.MustEvent(attrs...)
	}
	return out
}
