package bench

import (
	"fmt"
	"time"
)

// Config is one harness run: a workload, the sweeps over its knobs, the
// structures and how to measure them.
type Config struct {
	// Spec is the workload before sweeping.
	Spec Spec
	// Sweeps vary knobs; their grid is every combination (none: one point).
	Sweeps []Sweep
	// Structures are run at every point, in order.
	Structures []Structure
	// Options tune the measures.
	Options Options
	// Command is the command line recorded in the report.
	Command string
	// ResumeDir, when set, keeps each (structure, point) result in its
	// own file there as soon as it is measured; a rerun with the same
	// configuration reuses those results instead of measuring again, and
	// generates no workload for a point whose results are all there.
	ResumeDir string
	// ResumeAnyBuild reuses stored results whatever binary measured them.
	// By default a result stored by another build (CurrentBuild differs)
	// is measured again, so a table never silently mixes old and new code.
	ResumeAnyBuild bool
}

// Run measures every structure at every point of the grid. It fails on a
// bad configuration, a workload that cannot be generated or read, and on
// any structure whose results differ from scan's (a *MismatchError);
// structures over the time budget are skipped and marked, not dropped.
func Run(cfg Config) (*Report, error) {
	o := cfg.Options.withDefaults()
	if len(cfg.Structures) == 0 {
		return nil, fmt.Errorf("no structures to run")
	}
	if err := cfg.Spec.Validate(); err != nil {
		return nil, err
	}
	specs, params, err := grid(cfg.Spec, cfg.Sweeps)
	if err != nil {
		return nil, err
	}
	rep := newReport(cfg)
	store := resumeStore{dir: cfg.ResumeDir, build: CurrentBuild(), anyBuild: cfg.ResumeAnyBuild}
	total := len(specs) * len(cfg.Structures)
	for i, spec := range specs {
		var p *point // generated when the first structure needs it
		for _, s := range cfg.Structures {
			if o.Progress != nil {
				o.Progress(ProgressEvent{Done: len(rep.Results), Total: total, Running: true, Structure: s.Name, Point: params[i]})
			}
			res, done, err := store.load(s.Name, spec, params[i], o)
			if err != nil {
				return nil, err
			}
			if !done {
				if p == nil {
					if p, err = newPoint(spec, params[i], o); err != nil {
						return nil, err
					}
				}
				if res, err = runOne(s, p, o, rep.Results); err != nil {
					return nil, err
				}
				res.Build = store.build
				if err := store.save(res, spec, o); err != nil {
					return nil, err
				}
			}
			rep.Results = append(rep.Results, res)
			if o.Progress != nil {
				o.Progress(ProgressEvent{Done: len(rep.Results), Total: total, Structure: s.Name, Point: params[i]})
			}
		}
	}
	rep.Finish()
	return rep, nil
}

// newPoint generates (or reads) the workload of one point and Scan's
// reference answers on its check sample.
func newPoint(spec Spec, params []Param, o Options) (*point, error) {
	w, err := spec.Generate()
	if err != nil {
		return nil, err
	}
	ref, err := NewReference(w.Filters, w.Events, o.Check)
	if err != nil {
		return nil, err
	}
	return &point{params: params, filters: w.Filters, events: w.Events, ref: ref}, nil
}

// runOne measures s at p unless earlier results predict it cannot fit the
// budget.
func runOne(s Structure, p *point, o Options, earlier []Result) (Result, error) {
	if reason := predictOverBudget(s.Name, p, earlier, o.Budget); reason != "" {
		return Result{Structure: s.Name, Point: p.params, Subs: len(p.filters), Events: len(p.events),
			Status: StatusSkipped, Reason: reason}, nil
	}
	return measure(s, p, o)
}

// predictOverBudget looks at the structure's result at the closest
// smaller point (the same swept values except for fewer or as many
// subscriptions and events) and says why this point would exceed the
// budget: that point was already skipped, or its build plus one pass,
// scaled linearly in subscriptions and events, exceeds the budget. Linear
// scaling is exact for scanning structures, pessimistic for sublinear ones
// and optimistic for superlinear ones (whose builds and passes the budget
// still stops).
func predictOverBudget(name string, p *point, earlier []Result, budget time.Duration) string {
	subs, events := len(p.filters), len(p.events)
	var near *Result
	for i, r := range earlier {
		if r.Structure != name || r.Subs > subs || r.Events > events || r.Subs == 0 || r.Events == 0 ||
			r.Status == StatusError || !sameExceptSize(r.Point, p.params) {
			continue
		}
		if near == nil || r.Subs > near.Subs || r.Subs == near.Subs && r.Events > near.Events {
			near = &earlier[i]
		}
	}
	switch {
	case near == nil:
		return ""
	case near.Status == StatusSkipped:
		return fmt.Sprintf("over budget at a smaller point (%d subscriptions, %d events)", near.Subs, near.Events)
	}
	scale := float64(subs) / float64(near.Subs)
	est := time.Duration((near.BuildSeconds + near.MeanNs*1e-9*float64(events)) * scale * float64(time.Second))
	if est > budget {
		return fmt.Sprintf("predicted %v from %d subscriptions (linear scaling) > budget %v",
			est.Round(time.Second), near.Subs, budget)
	}
	return ""
}

// sameExceptSize reports whether two points have the same swept values
// apart from the subscription and event counts.
func sameExceptSize(a, b []Param) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
		if a[i].Value != b[i].Value && a[i].Name != "subs" && a[i].Name != "events" {
			return false
		}
	}
	return true
}
