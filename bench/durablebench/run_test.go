package durablebench

import (
	"context"
	"strings"
	"testing"
	"time"
)

// tinyConfig is a Sift-only run small enough for go test.
func tinyConfig(t *testing.T) Config {
	return Config{Systems: []System{Sift{}}, Subscribers: 4, Groups: 2, Publishers: 3, InFlight: 8, Events: 300,
		Payload: 50, LatencyEvents: 20, Rate: 1000, AckEvery: 8, Runs: 1, Stall: 20 * time.Second, Dir: t.TempDir()}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestSiftTiny runs the Sift side end to end: every subscriber gets its
// group's events exactly once (Run fails otherwise), through every phase,
// the catch-up after all subscribers were away.
func TestSiftTiny(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.CatchupEvents = 100
	rep, err := Run(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if want := int64(300 * 4 / 2); r.Deliveries != want {
		t.Fatalf("deliveries %d, want %d", r.Deliveries, want)
	}
	if r.Paced.Count != 20*4/2 || r.Backlog != 100*4/2 || r.CatchupPerSec <= 0 {
		t.Fatalf("paced %d, backlog %d at %v/s", r.Paced.Count, r.Backlog, r.CatchupPerSec)
	}
	if r.CatchupFirstSeconds <= 0 || r.CatchupFirstSeconds > r.CatchupSeconds {
		t.Fatalf("first catch-up delivery after %vs of a %vs phase", r.CatchupFirstSeconds, r.CatchupSeconds)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "start-up") {
		t.Fatalf("a catch-up of %vs: warnings %q", r.CatchupSeconds, rep.Warnings)
	}
	if r.AckedPerSec <= 0 || r.DeliveredPerS <= 0 || r.Paced.P50 <= 0 || r.Paced.P50 > r.Paced.P99 {
		t.Fatalf("figures: %+v", r)
	}
	if len(rep.Summary) != 1 || rep.Summary[0].DeliveredPerS != r.DeliveredPerS {
		t.Fatalf("summary %+v", rep.Summary)
	}
}

// TestSiftChurnRestart: 3 hops to two SHBs, subscribers disconnecting
// during the throughput phase, and a catch-up after the first SHB's
// router restarted on its store: still exactly once.
// TestSiftReplicatedTiny: the replicated Sift (pubend on three Raft
// replicas) beside the unreplicated one delivers every event exactly once
// (Run fails a Sift run that repeats one), and the report compares the
// two.
func TestSiftReplicatedTiny(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.Systems = WithReplicas([]System{Sift{}}, 3)
	rep, err := Run(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Results[1].System != "sift-r3" {
		t.Fatalf("results %+v", rep.Results)
	}
	for _, r := range rep.Results {
		if want := int64(300 * 4 / 2); r.Deliveries != want {
			t.Fatalf("%s: deliveries %d, want %d", r.System, r.Deliveries, want)
		}
	}
	if len(rep.Ratios) == 0 || rep.Ratios[0].Sift != "sift-r3" || rep.Ratios[0].Peer != "sift" || rep.Ratios[0].Met == nil {
		t.Fatalf("ratios %+v", rep.Ratios)
	}
}

func TestSiftChurnRestart(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.Topology = Topology{Hops: 3, SHBs: 2}
	cfg.Events, cfg.Publishers, cfg.InFlight = 800, 2, 4
	cfg.Churn = Churn{Every: 100 * time.Millisecond, For: 30 * time.Millisecond}
	cfg.CatchupEvents, cfg.RestartSHB = 200, true
	rep, err := Run(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.Disconnections == 0 {
		t.Errorf("no subscriber disconnected in %.2fs", r.Seconds)
	}
	if r.Backlog != 200/2*2 { // the first SHB's two subscribers, both of group 0
		t.Errorf("backlog %d", r.Backlog)
	}
	t.Logf("%d disconnections in %.2fs; catch-up %.0f/s", r.Disconnections, r.Seconds, r.CatchupPerSec)
}

// TestConfigErrors: bad configurations are refused before anything runs.
func TestConfigErrors(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"no system":     func(c *Config) { c.Systems = nil },
		"one hop":       func(c *Config) { c.Topology.Hops = 1 },
		"three shbs":    func(c *Config) { c.Topology.SHBs = 3 },
		"groups > subs": func(c *Config) { c.Groups = 9 },
		"endless churn": func(c *Config) { c.Churn = Churn{Every: time.Second, For: time.Second} },
		"twice":         func(c *Config) { c.Systems = []System{Sift{}, Sift{}} },
		"rate":          func(c *Config) { c.Rate = -1 },
	} {
		c := tinyConfig(t)
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Run(context.Background(), Config{Systems: []System{Sift{}}, Topology: Topology{Hops: 1}}); err == nil ||
		!strings.Contains(err.Error(), "hops") {
		t.Errorf("Run: %v", err)
	}
}

// TestRecorderChecks: the recorder counts each subscriber's first
// deliveries, and flags repeats and events outside its group.
func TestRecorderChecks(t *testing.T) {
	ev := NewEvents(2, 8, 1)
	r := newRecorder(ev, 2, 10, 0, 0)
	d0 := r.deliverTo(0) // group 0
	d0(r.event(0))
	d0(r.event(2))
	d0(r.event(2))
	d0(r.event(3))
	if n := r.delivered.Load(); n != 2 {
		t.Fatalf("delivered %d", n)
	}
	if dups, wrong := r.counts(); dups != 1 || wrong != 1 {
		t.Fatalf("dups %d wrong %d", dups, wrong)
	}
	if got := r.expected(10); got != 10 {
		t.Fatalf("expected %d", got)
	}
	if err := r.waitFor(context.Background(), 3, 10*time.Millisecond); err == nil || !strings.Contains(err.Error(), "subscriber 1, seq 1") {
		t.Fatalf("waitFor: %v", err)
	}
}
