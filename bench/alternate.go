package bench

import (
	"fmt"
	"path/filepath"
)

// Named is a system a side-by-side benchmark runs: Sift in one of its
// modes, or a peer broker.
type Named interface {
	Name() string
}

// Progress reports how far a side-by-side benchmark is.
type Progress struct {
	Done, Total int    // runs of one system finished, and planned
	System      string // the system starting now
	Run         int
}

// Alternate runs every system runs times and returns the results in the
// order of the runs: run(sys, n) makes run n (from 1) of sys. Within a run
// the systems go one after another, in the given order on odd runs and
// reversed on even ones, so each system sees the same share of the
// machine's changing load. progress, if not nil, is told as each run of a
// system starts and once all have ended. The first error stops the
// benchmark, with the run and system it came from.
func Alternate[S Named, R any](systems []S, runs int, progress func(Progress), run func(sys S, n int) (R, error)) ([]R, error) {
	total := runs * len(systems)
	var results []R
	for r := range runs {
		for i := range systems {
			sys := systems[i]
			if r%2 == 1 {
				sys = systems[len(systems)-1-i]
			}
			if progress != nil {
				progress(Progress{Done: len(results), Total: total, System: sys.Name(), Run: r + 1})
			}
			res, err := run(sys, r+1)
			if err != nil {
				return nil, fmt.Errorf("run %d of %s: %w", r+1, sys.Name(), err)
			}
			results = append(results, res)
		}
	}
	if progress != nil {
		progress(Progress{Done: total, Total: total})
	}
	return results, nil
}

// RunDir is the folder of run n of the system named sys under dir.
func RunDir(dir string, n int, sys string) string {
	return filepath.Join(dir, fmt.Sprintf("run%d-%s", n, sys))
}

// DistinctSystems reports an error when two systems have the same name
// (their runs and ratios would mix).
func DistinctSystems[S Named](systems []S) error {
	seen := map[string]bool{}
	for _, s := range systems {
		if seen[s.Name()] {
			return fmt.Errorf("system %s given twice", s.Name())
		}
		seen[s.Name()] = true
	}
	return nil
}

// RunsOf returns the results of the system named sys, in the order given.
func RunsOf[R RunResult](results []R, sys string) []R {
	var out []R
	for _, r := range results {
		if r.SystemName() == sys {
			out = append(out, r)
		}
	}
	return out
}
