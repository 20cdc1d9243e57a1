package bench

import (
	"fmt"
	"strings"

	"github.com/sift-pubsub/sift/match"
)

// Structure is one matching structure the harness can run: a registered
// match index or the expr baseline.
type Structure struct {
	// Name selects the structure in --index.
	Name string
	// Description is one line for listings.
	Description string
	// New returns an empty instance.
	New func() match.Index
}

// Structures returns every index registered with match (sorted by name)
// followed by the expr baseline. Indexes registered later (by packages
// imported later) appear automatically.
func Structures() []Structure {
	var out []Structure
	for _, info := range match.Indexes() {
		out = append(out, Structure{Name: info.Name, Description: info.Description, New: info.New})
	}
	return append(out, Structure{
		Name:        ExprName,
		Description: "baseline: every subscription compiled with expr-lang/expr, evaluated per event",
		New:         func() match.Index { return NewExpr() },
	})
}

// SelectStructures returns the named structures in the order given, or
// every structure when names is empty. An unknown or repeated name is an
// error listing the valid ones.
func SelectStructures(names []string) ([]Structure, error) {
	all := Structures()
	if len(names) == 0 {
		return all, nil
	}
	byName := make(map[string]Structure, len(all))
	var valid []string
	for _, s := range all {
		byName[s.Name] = s
		valid = append(valid, s.Name)
	}
	seen := make(map[string]bool)
	out := make([]Structure, 0, len(names))
	for _, n := range names {
		s, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("unknown structure %q (valid: %s)", n, strings.Join(valid, ", "))
		}
		if seen[n] {
			return nil, fmt.Errorf("structure %q given twice", n)
		}
		seen[n] = true
		out = append(out, s)
	}
	return out, nil
}
