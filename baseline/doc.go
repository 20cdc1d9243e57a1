// Package baseline holds what Sift's reimplementations of the published
// matching algorithms share: the error an index returns when it refuses a
// constraint its algorithm does not define.
//
// The algorithms themselves live in the packages below this one, one
// algorithm each, every one a match.Index registered under its own name
// and checked against match.Scan by the shared differential suite of
// baselinetest:
//
//   - counting: forward counting (Fabret et al., SIGMOD 2001), the
//     predicate-counting matcher every later paper compares with;
//   - rein: REIN (Qian et al., INFOCOM 2014), bucketed backward matching
//     with bitsets;
//   - tama: TAMA (Zhao and Wu, ICDCS 2011), counting over a table of cells,
//     made exact here;
//   - opindex: OpIndex (Zhang, Chan and Tan, PVLDB 2014), pivot-attribute
//     partitions with one index per attribute and operator.
//
// They are grouped under baseline/ rather than at the top level because
// they are not Sift's routing structures: they exist so that Sift's own
// indexes (fast, poset, forest, bftree, sbstree) can be measured next to
// the matchers the literature compares against, on the same workload and
// in the same harness. Each package doc says what its paper specifies,
// what the paper left open, and which choice was made here.
//
// # Refusals
//
// The papers define their structures for a subset of Sift's data model
// (REIN and TAMA for numeric intervals only). An index built from such a
// paper refuses a filter with any other constraint: Insert (and Load)
// returns an error wrapping ErrUnsupported that names the constraint, and
// the index is left unchanged.
package baseline

import (
	"errors"
	"fmt"

	"github.com/sift-pubsub/sift/match"
)

// ErrUnsupported is wrapped by the error an index returns for a
// constraint its algorithm does not define.
var ErrUnsupported = errors.New("constraint not supported")

// Unsupported returns the refusal of constraint c by the named algorithm,
// with the reason (e.g. "numeric ranges only").
func Unsupported(algorithm string, c match.Constraint, why string) error {
	return fmt.Errorf("%s: %v: %w (%s)", algorithm, c, ErrUnsupported, why)
}

// MustDefault adapts a constructor taking a Config to the registry's
// match.IndexInfo.New: it builds the index of the zero Config, whose
// defaults are valid by construction, and panics if they are not.
func MustDefault[C any, I match.Index](newIndex func(C) (I, error)) func() match.Index {
	return func() match.Index {
		var cfg C
		x, err := newIndex(cfg)
		if err != nil {
			panic(fmt.Sprintf("baseline: the default configuration is invalid: %v", err))
		}
		return x
	}
}
