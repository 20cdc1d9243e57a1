package bloomsweep

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/sift-pubsub/sift/bench"
)

// A long sweep runs in pieces (a few points each, so that no one run holds
// a shared machine for long) and Merge joins the pieces' reports into the
// sweep's: a point's workload depends only on the seed, its terms and its
// filters (pointSeed), so a point measured in a piece is the point of the
// whole sweep.

// Merge joins the reports of pieces of one sweep: the same Bloom
// parameters, tree and setup except for the terms and filters swept, and
// no point twice. The merged report's points are ordered as Run orders
// them (filters, then terms), its setup lists the union of terms and
// filters, and Pieces records each piece's command, time and load. Its
// RunInfo has command, the first piece's machine and start, the pieces'
// seconds summed, the first's starting load and the last's ending load.
func Merge(command string, pieces []*Report) (*Report, error) {
	if len(pieces) == 0 {
		return nil, fmt.Errorf("bloom sweep merge: no report to merge")
	}
	first := pieces[0]
	rep := &Report{RunInfo: bench.RunInfo{Command: command, Machine: first.Machine, Started: first.Started}, Params: first.Params, Index: first.Index, Config: first.Config}
	rep.Config.Terms, rep.Config.Filters = nil, nil
	seen := map[[2]int]bool{}
	for i, p := range pieces {
		if p.Params != first.Params || p.Index != first.Index || !sameSetup(p.Config, first.Config) {
			return nil, fmt.Errorf("bloom sweep merge: piece %d (%s) was run with other parameters than piece 0 (%s): %s %s %+v against %s %s %+v",
				i, p.Command, first.Command, p.Params, p.Index, p.Config, first.Params, first.Index, first.Config)
		}
		for _, pt := range p.Points {
			k := [2]int{pt.Terms, pt.Filters}
			if seen[k] {
				return nil, fmt.Errorf("bloom sweep merge: %d terms, %d filters measured twice (again in piece %d, %s)", pt.Terms, pt.Filters, i, p.Command)
			}
			seen[k] = true
			rep.Points = append(rep.Points, pt)
			rep.Config.Terms = append(rep.Config.Terms, pt.Terms)
			rep.Config.Filters = append(rep.Config.Filters, pt.Filters)
		}
		rep.Pieces = append(rep.Pieces, p.RunInfo)
		rep.Seconds += p.Seconds
	}
	slices.SortFunc(rep.Points, func(a, b Point) int {
		return cmp.Or(cmp.Compare(a.Filters, b.Filters), cmp.Compare(a.Terms, b.Terms))
	})
	slices.Sort(rep.Config.Terms)
	slices.Sort(rep.Config.Filters)
	rep.Config.Terms, rep.Config.Filters = slices.Compact(rep.Config.Terms), slices.Compact(rep.Config.Filters)
	rep.LoadStart, rep.LoadEnd = first.LoadStart, pieces[len(pieces)-1].LoadEnd
	return rep, nil
}

// sameSetup reports whether two setups differ at most in the terms and
// filters swept.
func sameSetup(a, b Setup) bool {
	a.Terms, a.Filters, b.Terms, b.Filters = nil, nil, nil, nil
	return slices.Equal(a.Chains, b.Chains) && a.Events == b.Events && a.Probes == b.Probes && a.Hit == b.Hit &&
		a.MinCPU == b.MinCPU && a.Rounds == b.Rounds && a.Seed == b.Seed
}

// ReadReport reads the results.json a sweep (or a merge) wrote into dir.
func ReadReport(dir string) (*Report, error) {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, fmt.Errorf("bloom sweep report: %w", err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("bloom sweep report %s: %w", dir, err)
	}
	return &rep, nil
}

// pointSeed is the seed of the point (terms, filters) of a sweep with
// seed: the point's own, whatever else the sweep (or the piece of it)
// measures.
func pointSeed(seed uint64, terms, filters int) uint64 {
	return seed ^ uint64(terms)<<40 ^ uint64(filters)*0x9e3779b97f4a7c15
}
