package netbench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
)

func tinyConfig(kind string, systems ...System) Config {
	return Config{
		Workload: workload.NetConfig{Kind: kind, Subscribers: 4, Events: 1000},
		Seed:     3, Systems: systems, Routers: 2, Events: 1500, Window: 300,
		Rate: 5000, LatencyEvents: 50, Runs: 2, Stall: 20 * time.Second, Command: "sift bench net (test)",
	}
}

// TestRunSiftTiny runs the Sift side end to end at a tiny scale on both
// workloads, against the in-memory peer: every delivery checked, every
// figure filled, ratios computed with the workload's targets.
func TestRunSiftTiny(t *testing.T) {
	for _, kind := range workload.NetKinds() {
		t.Run(kind, func(t *testing.T) {
			cfg := tinyConfig(kind, Sift{Mode: ModeExact}, Sift{Mode: ModeBloom}, memSystem{name: "mem"})
			cfg.Dir = t.TempDir()
			var progress []Progress
			cfg.Progress = func(p Progress) { progress = append(progress, p) }
			rep, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Results) != 6 || len(progress) != 7 || progress[6].Done != 6 {
				t.Fatalf("%d results, progress %+v", len(rep.Results), progress)
			}
			// Runs alternate: the order reverses on the second run.
			var order []string
			for _, r := range rep.Results {
				order = append(order, r.System)
			}
			if strings.Join(order, " ") != "sift-exact sift-bloom mem mem sift-bloom sift-exact" {
				t.Fatalf("run order %v", order)
			}
			for _, r := range rep.Results {
				if r.Deliveries == 0 || r.EventsPerSec <= 0 || r.Paced.Count == 0 || r.Loaded.Count == 0 || r.Loaded.Count >= uint64(r.Deliveries) {
					t.Fatalf("%s run %d: %+v", r.System, r.Run, r)
				}
				if r.WireBytes <= 0 || r.Paced.P99 < r.Paced.P50 {
					t.Fatalf("%s run %d: wire bytes %d, paced %+v", r.System, r.Run, r.WireBytes, r.Paced)
				}
			}
			for _, sys := range []string{"sift-exact", "sift-bloom"} {
				if bpd := rep.runsOf(sys)[0].BytesPerDelivery(); bpd < 50 || bpd > 5000 {
					t.Errorf("%s: %.0f wire bytes per delivery", sys, bpd)
				}
			}
			targets := 0
			for _, r := range rep.Ratios {
				if !strings.HasPrefix(r.Sift, "sift-") || r.Peer != "mem" || len(r.PerRun) != 2 {
					t.Errorf("ratio %+v", r)
				}
				if r.Met != nil {
					targets++
				}
			}
			if want := map[string]int{workload.NetTopic: 4, workload.NetContent: 2}[kind]; targets != want {
				t.Errorf("%d ratios with a target, want %d", targets, want)
			}
			checkFiles(t, rep)
		})
	}
}

func checkFiles(t *testing.T, rep *Report) {
	t.Helper()
	dir := t.TempDir()
	if err := rep.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	var back Report
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &back); err != nil || back.Command != rep.Command || back.Machine.Cores == 0 || len(back.Results) != len(rep.Results) {
		t.Fatalf("results.json: %v, %+v", err, back.Machine)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	if err != nil || strings.Count(string(csv), "\n") != len(rep.Results)+1 {
		t.Fatalf("results.csv: %v\n%s", err, csv)
	}
	for _, png := range []string{"throughput.png", "cpu.png", "bytes.png", "latency.png", "runs.png"} {
		if st, err := os.Stat(filepath.Join(dir, png)); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", png, err)
		}
	}
	var table strings.Builder
	if err := rep.WriteTable(&table); err != nil || !strings.Contains(table.String(), "sift-exact / mem") {
		t.Errorf("table: %v\n%s", err, table.String())
	}
}

// TestRunCatchesMisdelivery: a system that repeats a delivery fails the
// benchmark rather than being measured.
func TestRunCatchesMisdelivery(t *testing.T) {
	cfg := tinyConfig(workload.NetTopic, memSystem{name: "broken", broken: true})
	cfg.Runs = 1
	_, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "unexpected or repeated") {
		t.Fatalf("got %v", err)
	}
}

func TestConfigInvalid(t *testing.T) {
	ok := tinyConfig(workload.NetTopic, memSystem{name: "a"})
	for name, mod := range map[string]func(*Config){
		"no systems": func(c *Config) { c.Systems = nil },
		"twice":      func(c *Config) { c.Systems = []System{memSystem{name: "a"}, memSystem{name: "a"}} },
		"routers":    func(c *Config) { c.Routers = 99 },
		"rate":       func(c *Config) { c.Rate = -1 },
		"workload":   func(c *Config) { c.Workload.Kind = "nope" },
		"bad mode":   func(c *Config) { c.Systems = []System{Sift{Mode: "psychic"}} },
	} {
		c := ok
		mod(&c)
		err := c.Validate()
		if name == "bad mode" {
			_, err = Run(context.Background(), c)
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
