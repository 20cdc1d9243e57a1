package netbench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

func tinyConfig(kind string, systems ...System) Config {
	return Config{
		Workload: workload.NetConfig{Kind: kind, Subscribers: 4, Events: 1000},
		Seed:     3, Systems: systems, Routers: 2, Events: 1500, Duration: 300 * time.Millisecond, Window: 300,
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
				// Every run lasts the duration at least, publishing past
				// the lap of prebuilt events when it is fast enough.
				if r.Seconds < 0.3 || r.Events < 1500 || r.EventsPerSec*r.Seconds < float64(r.Events)*0.999 {
					t.Fatalf("%s run %d: %d events in %.3fs", r.System, r.Run, r.Events, r.Seconds)
				}
				if r.System == "mem" && r.Events < 3*1500 {
					t.Fatalf("mem run %d: %d events in %.3fs, expected several laps", r.Run, r.Events, r.Seconds)
				}
				if r.WireBytes <= 0 || r.Paced.P99 < r.Paced.P50 {
					t.Fatalf("%s run %d: wire bytes %d, paced %+v", r.System, r.Run, r.WireBytes, r.Paced)
				}
				checkTransport(t, r)
			}
			for _, sys := range []string{"sift-exact", "sift-bloom"} {
				if bpd := rep.runsOf(sys)[0].BytesPerDelivery(); bpd < 50 || bpd > 5000 {
					t.Errorf("%s: %.0f wire bytes per delivery", sys, bpd)
				}
			}
			targets := 0
			for _, r := range rep.Ratios {
				if !strings.HasPrefix(r.Sift, "sift-") || (r.Peer != "mem" && r.Peer+r.Sift != "sift-exactsift-bloom") || len(r.PerRun) != 2 {
					t.Errorf("ratio %+v", r)
				}
				if r.Met != nil {
					targets++
				}
			}
			if want := map[string]int{workload.NetTopic: 8, workload.NetContent: 4}[kind]; targets != want {
				t.Errorf("%d ratios with a target, want %d", targets, want)
			}
			checkFiles(t, rep)
		})
	}
}

// checkTransport: Sift's runs record their publisher's QUIC packets
// (sent, lost, the acknowledgements received, a window and an RTT), at
// least one packet per 1,452 bytes of the frames the client sent (a
// publish-compact event of the workload takes more than 10 bytes); the
// in-memory peer's record none.
func checkTransport(t *testing.T, r Result) {
	t.Helper()
	tr := r.Transport
	if !strings.HasPrefix(r.System, "sift-") {
		if tr != nil || r.PacedTransport != nil {
			t.Errorf("%s run %d: transport %+v from a system without one", r.System, r.Run, tr)
		}
		return
	}
	if tr == nil || tr.PacketsReceived == 0 || tr.PacketsLost > tr.PacketsSent || tr.CongestionWindow == 0 || tr.SmoothedRTT <= 0 {
		t.Fatalf("%s run %d: transport %+v", r.System, r.Run, tr)
	}
	if minPackets := uint64(r.Events) * 10 / 1452; tr.PacketsSent < minPackets {
		t.Errorf("%s run %d: %d packets for %d events, want at least %d", r.System, r.Run, tr.PacketsSent, r.Events, minPackets)
	}
	// The paced publisher sends each event on its own (a batch of one).
	if p := r.PacedTransport; p == nil || p.PacketsSent < r.Paced.Count/10 || p.PacketsLost > p.PacketsSent {
		t.Errorf("%s run %d: paced transport %+v for %d paced deliveries", r.System, r.Run, p, r.Paced.Count)
	}
}

// TestTransportSince: the phase's counts are the differences, a loss
// count that fell (packets declared lost that arrived after all) is
// zero, and the window and RTT are the end's.
func TestTransportSince(t *testing.T) {
	before := TransportStats{PacketsSent: 10, PacketsLost: 5, PacketsReceived: 4, CongestionWindow: 1, SmoothedRTT: 1}
	after := TransportStats{PacketsSent: 110, PacketsLost: 3, PacketsReceived: 54, CongestionWindow: 9000, SmoothedRTT: 80}
	got := *after.since(before)
	want := TransportStats{PacketsSent: 100, PacketsLost: 0, PacketsReceived: 50, CongestionWindow: 9000, SmoothedRTT: 80}
	if got != want {
		t.Fatalf("since: %+v, want %+v", got, want)
	}
	after.PacketsLost = 15
	if got := after.since(before); got.PacketsLost != 10 || got.LossRate() != 0.1 {
		t.Fatalf("since: %+v, loss rate %v", got, got.LossRate())
	}
	var none *TransportStats
	if none.LossRate() != 0 {
		t.Fatal("nil loss rate")
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
	if err := rep.WriteTable(&table); err != nil || !strings.Contains(table.String(), "sift-exact / mem") ||
		!strings.Contains(table.String(), "sift-exact run 1 publisher: ") || strings.Contains(table.String(), "mem run 1 publisher") {
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

// TestRecorderLaps drives a recorder by hand over several laps: exact
// deliveries check clean, and a repeat, a loss, or a loss and a repeat of
// another index (same count) are all counted as wrong.
func TestRecorderLaps(t *testing.T) {
	w, err := workload.Net(workload.NetConfig{Kind: workload.NetTopic, Subscribers: 3, Events: 200, Selectivity: 0.05}, 5)
	if err != nil {
		t.Fatal(err)
	}
	const lap, latency, n = 120, 10, 3*120 + 47
	type delivery struct {
		sub int
		e   match.Event
	}
	// fresh returns a recorder with n throughput sequences taken and
	// published, and every delivery they and the latency events owe.
	fresh := func() (*recorder, []delivery) {
		rec := newRecorder(w, lap, latency)
		var ds []delivery
		for range n {
			s, _ := rec.take()
			e := rec.event(s)
			for i, sub := range w.Subs {
				if sub.Filter.Matches(e) {
					ds = append(ds, delivery{i, e})
				}
			}
		}
		for j := range latency {
			e := rec.latencyEvent(j)
			for i, sub := range w.Subs {
				if sub.Filter.Matches(e) {
					ds = append(ds, delivery{i, e})
				}
			}
		}
		return rec, ds
	}
	rec, ds := fresh()
	if int64(len(ds)) != rec.expectedAll(n) || len(ds) < 20 {
		t.Fatalf("%d deliveries owed, recorder expects %d", len(ds), rec.expectedAll(n))
	}
	for _, d := range ds {
		rec.subs[d.sub].deliver(d.e)
	}
	if got := rec.wrong(n); got != 0 || rec.got.Load() != int64(len(ds)) {
		t.Fatalf("clean run: %d wrong, %d correct of %d", got, rec.got.Load(), len(ds))
	}
	for name, edit := range map[string]func([]delivery) []delivery{
		"repeat":          func(ds []delivery) []delivery { return append(ds, ds[3]) },
		"loss":            func(ds []delivery) []delivery { return ds[1:] },
		"loss and repeat": func(ds []delivery) []delivery { return append(ds[1:], ds[len(ds)-1]) },
	} {
		rec, ds := fresh()
		for _, d := range edit(ds) {
			rec.subs[d.sub].deliver(d.e)
		}
		if rec.wrong(n) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
}

// TestRecorderTakesStopAtLimit closes the handing out of sequences while
// four goroutines take them: every sequence taken is below the limit
// closeTakes returns, and every one below it was taken exactly once, so
// the throughput phase publishes exactly the sequences it counts.
func TestRecorderTakesStopAtLimit(t *testing.T) {
	w, err := workload.Net(workload.NetConfig{Kind: workload.NetTopic, Subscribers: 3, Events: 200, Selectivity: 0.05}, 5)
	if err != nil {
		t.Fatal(err)
	}
	for trial := range 200 {
		rec := newRecorder(w, 120, 10)
		var mu sync.Mutex
		var taken []int64
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					s, ok := rec.take()
					if !ok {
						return
					}
					mu.Lock()
					taken = append(taken, s)
					mu.Unlock()
				}
			})
		}
		limit := rec.closeTakes(int64(trial))
		wg.Wait()
		slices.Sort(taken)
		if int64(len(taken)) != limit {
			t.Fatalf("trial %d: %d sequences taken, limit %d", trial, len(taken), limit)
		}
		for i, s := range taken {
			if s != int64(i) {
				t.Fatalf("trial %d: sequence %d taken where %d was due (limit %d)", trial, s, i, limit)
			}
		}
	}
}
