package bench

import (
	"fmt"
	"slices"
	"strings"
)

// Scenario is a named, published sweep: a workload, the knobs it fixes,
// the knob it sweeps and the structures it compares. The HEM scenarios
// are the sweeps of the REIN/TAMA/HEM line of papers.
type Scenario struct {
	// Name selects it in `sift bench match --scenario NAME`.
	Name string
	// Description is one line for listings.
	Description string
	// Kind is the workload kind.
	Kind string
	// Sets fixes knobs, KNOB=VALUE, before the user's --set.
	Sets []string
	// Sweep is the swept knob and its published values.
	Sweep Sweep
	// Structures are compared unless the user names others.
	Structures []string
}

// hemStructures are the HEM line's structures this harness has, and
// Sift's fast index.
var hemStructures = []string{"fast", "tama", "rein", "opindex", "counting"}

var scenarios = []Scenario{
	{
		Name: "hem-subs", Description: "HEM workload, 0.3M to 9M subscriptions (20 attributes, 10 ranges of width 0.3)",
		Kind: KindHEM, Sets: []string{"events=500"},
		Sweep:      Sweep{Knob: "subs", Values: []string{"300000", "1000000", "3000000", "5000000", "7000000", "9000000"}},
		Structures: hemStructures,
	},
	{
		Name: "hem-width", Description: "HEM workload at 1M subscriptions, predicate width 0.1 to 0.9",
		Kind: KindHEM, Sets: []string{"subs=1000000", "events=500"},
		Sweep:      Sweep{Knob: "width", Values: []string{"0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"}},
		Structures: hemStructures,
	},
	{
		Name: "hem-preds", Description: "HEM workload at 1M subscriptions over 30 attributes, 5 to 30 predicates per subscription",
		Kind: KindHEM, Sets: []string{"subs=1000000", "events=500", "attrs=30"},
		Sweep:      Sweep{Knob: "preds", Values: []string{"5", "10", "15", "20", "25", "30"}},
		Structures: hemStructures,
	},
	{
		Name: "hem-skew", Description: "HEM workload at 1M subscriptions, Zipf skew of attribute choice 0 to 5",
		Kind: KindHEM, Sets: []string{"subs=1000000", "events=500"},
		Sweep:      Sweep{Knob: "attr-skew", Values: []string{"0", "1", "2", "3", "4", "5"}},
		Structures: hemStructures,
	},
}

// Scenarios returns the named scenarios.
func Scenarios() []Scenario { return slices.Clone(scenarios) }

// LookupScenario returns the named scenario, or an error listing them.
func LookupScenario(name string) (Scenario, error) {
	for _, sc := range scenarios {
		if sc.Name == name {
			return sc, nil
		}
	}
	var names []string
	for _, sc := range scenarios {
		names = append(names, sc.Name)
	}
	return Scenario{}, fmt.Errorf("unknown scenario %q (valid: %s)", name, strings.Join(names, ", "))
}

// Sweeps returns the scenario's sweep merged with the user's: a user
// sweep of the scenario's knob replaces its values (to run part of a
// sweep), other user sweeps are added after it.
func (sc Scenario) Sweeps(user []Sweep) []Sweep {
	out := []Sweep{sc.Sweep}
	for _, sw := range user {
		if sw.Knob == sc.Sweep.Knob {
			out[0] = sw
			continue
		}
		out = append(out, sw)
	}
	return out
}
