package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sift-pubsub/sift/bench"
)

type benchMatchOptions struct {
	workload, subsFile, eventsFile, out string
	scenario                            string
	scenarioSets                        []string // applied before every other knob
	subs, events, runs, warmup, check   int
	seed                                uint64
	indexes, sweeps, sets               []string
	budget                              time.Duration
	quiet, list, resumeAnyBuild         bool
}

func init() {
	var o benchMatchOptions
	cmd := &cobra.Command{
		Use:   "match [--workload hem|stock|files] [--index NAME,...] [--sweep KNOB=v1,v2,...]",
		Short: "Run every matching structure on the same workload and report",
		Long: `Match builds every registered matching index, plus the expr baseline (each
subscription compiled with expr-lang/expr and evaluated per event), on one
seeded workload, checks each structure's results against scan on a sample of
events (a mismatch fails the run), and measures build time, inserts/s, live
heap, and match time per event (mean, median, p99; median of --runs passes
after a warm-up). A structure that cannot fit the --budget at a point is
skipped there and marked, not dropped.

Workloads: hem (the REIN/TAMA/HEM synthetic range workload), stock (trades of
ticker symbols with realistic subscriptions), files (--subs-file and
--events-file in the format of sift match). --sweep KNOB=v1,v2 (repeatable)
runs the grid of knob values; --set KNOB=V fixes one. See --list for the
structures and knobs.

The table goes to stdout; results.json (with the machine and this command),
results.csv and PNG plots go to --out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.list {
				return listBench(cmd.OutOrStdout())
			}
			if o.scenario != "" && !cmd.Flags().Changed("out") {
				o.out = filepath.Join("bench-out", o.scenario)
			}
			return runBenchMatch(cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.workload, "workload", bench.KindHEM, "workload: hem, stock or files")
	f.IntVar(&o.subs, "subs", 0, "subscriptions (0: the workload's default; files: keep the first N)")
	f.IntVar(&o.events, "events", 0, "events (0: the workload's default, 1000; files: keep the first N)")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the generated workloads")
	f.StringSliceVar(&o.indexes, "index", nil, "structures to run, comma-separated (default: all)")
	f.StringVar(&o.out, "out", "bench-out", "directory for results.json, results.csv and plots")
	f.BoolVar(&o.quiet, "quiet", false, "no progress bar or messages on stderr")
	f.StringVar(&o.subsFile, "subs-file", "", "subscriptions file of the files workload")
	f.StringVar(&o.eventsFile, "events-file", "", "events file (JSON Lines) of the files workload")
	f.StringArrayVar(&o.sweeps, "sweep", nil, "sweep a knob: KNOB=v1,v2,... (repeatable: the grid of all)")
	f.StringArrayVar(&o.sets, "set", nil, "set a knob: KNOB=VALUE (repeatable)")
	f.IntVar(&o.runs, "runs", 3, "timed passes over the events per structure and point")
	f.IntVar(&o.warmup, "warmup", 100, "events matched before timing")
	f.IntVar(&o.check, "check", 100, "sampled events checked against scan (-1: all)")
	f.DurationVar(&o.budget, "budget", 2*time.Minute, "time budget per structure and point")
	f.BoolVar(&o.list, "list", false, "list the structures, each workload's knobs and the scenarios")
	f.StringVar(&o.scenario, "scenario", "", "run a published sweep (hem-subs, hem-width, hem-preds, hem-skew; see --list); resumable, results in --out (default bench-out/NAME)")
	f.BoolVar(&o.resumeAnyBuild, "resume-any-build", false, "with --scenario: reuse stored points measured by other builds of sift (by default they are measured again; results.json names each point's build)")
	benchParentCmd().AddCommand(cmd)
}

func runBenchMatch(stdout, stderr io.Writer, o benchMatchOptions) error {
	var scenario *bench.Scenario
	if o.scenario != "" {
		sc, err := bench.LookupScenario(o.scenario)
		if err != nil {
			return fmt.Errorf("bench match: %w", err)
		}
		scenario = &sc
		o.workload, o.scenarioSets = sc.Kind, sc.Sets
		if len(o.indexes) == 0 {
			o.indexes = sc.Structures
		}
	}
	spec, err := benchSpec(o)
	if err != nil {
		return err
	}
	structures, err := bench.SelectStructures(o.indexes)
	if err != nil {
		return fmt.Errorf("bench match: %w", err)
	}
	var sweeps []bench.Sweep
	for _, s := range o.sweeps {
		sw, err := bench.ParseSweep(s)
		if err != nil {
			return fmt.Errorf("bench match: %w", err)
		}
		sweeps = append(sweeps, sw)
	}
	resume := ""
	if scenario != nil {
		sweeps = scenario.Sweeps(sweeps)
		resume = filepath.Join(o.out, "points")
	}
	if o.runs < 1 || o.warmup < 1 || o.check == 0 || o.check < -1 || o.budget <= 0 {
		return errors.New("bench match: --runs and --warmup must be at least 1, --check positive or -1, --budget positive")
	}
	cfg := bench.Config{
		Spec: spec, Sweeps: sweeps, Structures: structures, Command: commandLine(), ResumeDir: resume, ResumeAnyBuild: o.resumeAnyBuild,
		Options: bench.Options{Runs: o.runs, Warmup: o.warmup, Check: o.check, Budget: o.budget},
	}
	bar := newBenchBar(stderr, o.quiet, "bench match")
	if bar != nil {
		cfg.Options.Progress = func(p bench.ProgressEvent) {
			desc := ""
			if p.Running {
				desc = fmt.Sprintf("%s %s", p.Structure, paramsLabel(p.Point))
			}
			bar.update(p.Done, p.Total, desc)
		}
	}
	rep, err := bench.Run(cfg)
	bar.finish()
	if err != nil {
		return fmt.Errorf("bench match: %w", err)
	}
	if err := writeBenchReport(stdout, stderr, rep, o.out, o.quiet); err != nil {
		return fmt.Errorf("bench match: %w", err)
	}
	return nil
}

// benchSpec turns the flags into a workload spec.
func benchSpec(o benchMatchOptions) (bench.Spec, error) {
	spec := bench.Spec{Kind: o.workload, Seed: o.seed, SubsFile: o.subsFile, EventsFile: o.eventsFile}
	if (o.subsFile != "" || o.eventsFile != "") && o.workload != bench.KindFiles {
		return spec, errors.New("bench match: --subs-file and --events-file need --workload files")
	}
	sets := o.sets
	if o.subs > 0 {
		sets = append([]string{fmt.Sprintf("subs=%d", o.subs)}, sets...)
	}
	if o.events > 0 {
		sets = append([]string{fmt.Sprintf("events=%d", o.events)}, sets...)
	}
	sets = append(slices.Clone(o.scenarioSets), sets...)
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return spec, fmt.Errorf("bench match: --set %q: want KNOB=VALUE", s)
		}
		if err := spec.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return spec, fmt.Errorf("bench match: %w", err)
		}
	}
	if err := spec.Validate(); err != nil {
		return spec, fmt.Errorf("bench match: %w", err)
	}
	return spec, nil
}

func listBench(w io.Writer) error {
	fmt.Fprintln(w, "structures:")
	for _, s := range bench.Structures() {
		fmt.Fprintf(w, "  %-10s %s\n", s.Name, s.Description)
	}
	fmt.Fprintln(w, "knobs (--set, --sweep):")
	for _, kind := range bench.Kinds() {
		fmt.Fprintf(w, "  %-10s %s\n", kind, strings.Join(bench.KnobNames(kind), ", "))
	}
	fmt.Fprintln(w, "scenarios (--scenario; --sweep of the same knob runs part of it):")
	for _, sc := range bench.Scenarios() {
		fmt.Fprintf(w, "  %-10s %s; %s=%s\n", sc.Name, sc.Description, sc.Sweep.Knob, strings.Join(sc.Sweep.Values, ","))
	}
	return nil
}

func paramsLabel(ps []bench.Param) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, p.Name+"="+p.Value)
	}
	return strings.Join(parts, " ")
}

// commandLine returns the command as typed, arguments quoted where a shell
// would need it.
func commandLine() string {
	args := make([]string, len(os.Args))
	for i, a := range os.Args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`*?&|;<>()[]{}") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		args[i] = a
	}
	if len(args) > 0 {
		args[0] = "sift"
	}
	return strings.Join(args, " ")
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
