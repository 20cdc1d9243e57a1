package bench

// Report is everything a run measured, with what is needed to reproduce
// it: the command, the machine, the workload parameters and the sweeps.
type Report struct {
	RunInfo
	Workload string `json:"workload"`
	// Params are the workload's parameters before sweeping.
	Params  []Param  `json:"params"`
	Sweeps  []Sweep  `json:"sweeps,omitempty"`
	Options RunOpts  `json:"options"`
	Results []Result `json:"results"`
}

// RunOpts are the measurement options as reported.
type RunOpts struct {
	Runs          int     `json:"runs"`
	Warmup        int     `json:"warmup_events"`
	Check         int     `json:"check_events"`
	BudgetSeconds float64 `json:"budget_seconds"`
}

func newReport(cfg Config) *Report {
	o := cfg.Options.withDefaults()
	return &Report{
		RunInfo:  StartRunInfo(cfg.Command),
		Workload: cfg.Spec.Kind,
		Params:   cfg.Spec.Params(),
		Sweeps:   cfg.Sweeps,
		Options:  RunOpts{Runs: o.Runs, Warmup: o.Warmup, Check: o.Check, BudgetSeconds: o.Budget.Seconds()},
	}
}
