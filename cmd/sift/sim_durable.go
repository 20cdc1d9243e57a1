package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	dsim "github.com/sift-pubsub/sift/durable/sim"
)

func init() {
	var (
		seeds   string
		events  int
		faults  string
		topo    string
		pubends int
		learn   bool
		reps    int
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "durable",
		Short: "Simulate durable subscriptions under faults and check exactly-once delivery",
		Long: `Run the deterministic simulator of the durable layer (PHBs, a tree of
routers, SHBs, publishers and subscribers in one process) once per seed,
inject the chosen faults, and check every run against the oracle:
exactly-once, in-order delivery above each presented CT, gaps only over
released ticks, no tick announced twice with other content, each publish
logged once, events stored only at PHBs, and catch-up after the faults
heal. Every violation prints its seed and a replay command; the last
line is "seeds=K violations=V" and the exit status is 1 if V > 0.

Faults (--faults, comma-separated, "all" (every one but block, wipe, full, outage and join) or "none"):
  ` + dsim.FaultNames(),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			from, to, err := parseSeedRange(seeds)
			if err != nil {
				return err
			}
			fs, err := dsim.ParseFaults(faults)
			if err != nil {
				return err
			}
			tp, err := dsim.ParseTopology(topo)
			if err != nil {
				return err
			}
			base := dsim.Config{Events: events, Faults: fs, Topology: tp, Pubends: pubends, LearnSHBs: learn, Replicas: reps}
			v := runDurableSims(cmd.OutOrStdout(), from, to, base, asJSON)
			fmt.Fprintf(cmd.OutOrStdout(), "seeds=%d violations=%d\n", to-from+1, v)
			if v > 0 {
				return &exitError{code: 1, err: fmt.Errorf("")}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&seeds, "seeds", "1..100", "seed range A..B (inclusive), or one seed")
	cmd.Flags().IntVar(&events, "events", 40, "events published per run")
	cmd.Flags().StringVar(&faults, "faults", "all", "faults to inject")
	cmd.Flags().StringVar(&topo, "topology", "", "broker network: flat (one router), deep (routers r1-r2 and r1-r3-r4), chain (r1-r2-r3, pubends and SHBs at the routers), tree (r1-r2, r1-r3-r4, pubends and SHBs at the routers); empty picks by seed")
	cmd.Flags().IntVar(&pubends, "pubends", 0, "pubends per run, spread over the routers in the chain and tree meshes (0: 2)")
	cmd.Flags().BoolVar(&learn, "learn-shbs", false, "pubends start knowing no SHB and learn them from their installs and reports (as before a mesh's directory converged)")
	cmd.Flags().IntVar(&reps, "replicas", 0, "replicate each pubend on this many PHB replicas with Raft (0 or 1: unreplicated); with crash faults each group's leader is killed during publishing and one replica's disk is wiped, with partition faults links between replicas are cut")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per seed (JSON Lines) before the summary line")
	simParentCmd().AddCommand(cmd)
}

// parseSeedRange parses "A..B" or "A".
func parseSeedRange(s string) (from, to uint64, err error) {
	a, b, found := strings.Cut(s, "..")
	if !found {
		b = a
	}
	if from, err = strconv.ParseUint(a, 10, 64); err == nil {
		to, err = strconv.ParseUint(b, 10, 64)
	}
	if err != nil || to < from {
		return 0, 0, fmt.Errorf("--seeds %q: want A..B with A <= B", s)
	}
	return from, to, nil
}

// durableSeedReport is the JSON form of one run.
type durableSeedReport struct {
	Seed       uint64     `json:"seed"`
	Violations []string   `json:"violations"`
	Replay     string     `json:"replay,omitempty"`
	Stats      dsim.Stats `json:"stats"`
}

// runDurableSims runs base with each seed on every core, prints results in
// seed order and returns the number of violations.
func runDurableSims(w io.Writer, from, to uint64, base dsim.Config, asJSON bool) int {
	n := int(to - from + 1)
	results := make([]dsim.Result, n)
	ready := make([]chan struct{}, n)
	for i := range ready {
		ready[i] = make(chan struct{})
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				cfg := base
				cfg.Seed = from + uint64(i)
				results[i] = dsim.Run(cfg)
				close(ready[i])
			}
		}()
	}
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
	}()
	violations := 0
	var total dsim.Stats
	for i := range n {
		<-ready[i]
		r := results[i]
		violations += len(r.Violations)
		total.Add(r.Stats)
		replay := fmt.Sprintf("sift sim durable --seeds %d..%d --events %d --faults %s",
			r.Seed, r.Seed, base.Events, dsim.FaultList(base.Faults))
		if base.Topology != "" {
			replay += " --topology " + string(base.Topology)
		}
		if base.Pubends > 0 {
			replay += fmt.Sprintf(" --pubends %d", base.Pubends)
		}
		if base.LearnSHBs {
			replay += " --learn-shbs"
		}
		if base.Replicas > 1 {
			replay += fmt.Sprintf(" --replicas %d", base.Replicas)
		}
		if asJSON {
			rep := durableSeedReport{Seed: r.Seed, Stats: r.Stats, Violations: []string{}}
			for _, v := range r.Violations {
				rep.Violations = append(rep.Violations, fmt.Sprintf("at %d us: %s", v.Time, v.What))
			}
			if len(r.Violations) > 0 {
				rep.Replay = replay
			}
			b, _ := json.Marshal(rep)
			fmt.Fprintln(w, string(b))
			continue
		}
		for _, v := range r.Violations {
			fmt.Fprintf(w, "seed %d at %d us: %s\n  replay: %s\n", v.Seed, v.Time, v.What, replay)
		}
	}
	wg.Wait()
	if !asJSON {
		fmt.Fprintln(w, total.Summary())
	}
	return violations
}
