package durablebench

import (
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/bench"
)

// TestReplicatedRatios: with a replicated Sift in the systems, the
// ratios compare it with the unreplicated Sift (target 0.5x) and with
// each replicated peer (target 3x) on acknowledged publishes/s, run by
// run; without one, Sift against each peer as before (target 1x).
func TestReplicatedRatios(t *testing.T) {
	run := func(sys string, n int, acked float64) Result {
		return Result{RunID: bench.RunID{System: sys, Run: n}, AckedPerSec: acked, DeliveredPerS: acked}
	}
	rep := &Report{Setup: Setup{Systems: []string{"sift", "sift-r3", "jetstream-r3"}}, Results: []Result{
		run("sift", 1, 1000), run("sift-r3", 1, 600), run("jetstream-r3", 1, 150),
		run("sift", 2, 1000), run("sift-r3", 2, 400), run("jetstream-r3", 2, 250),
	}}
	rep.finish()
	got := map[string]bench.Ratio{}
	for _, r := range rep.Ratios {
		if r.Measure == "acknowledged publishes/s" {
			got[r.Peer] = r
		}
	}
	if r := got["sift"]; r.Sift != "sift-r3" || r.Median != 0.5 || r.Met == nil || !*r.Met || !strings.Contains(r.Target, "0.5x") {
		t.Fatalf("sift-r3 / sift: %+v", r)
	}
	if r := got["jetstream-r3"]; r.Sift != "sift-r3" || r.Met == nil || *r.Met || !strings.Contains(r.Target, "3x") {
		t.Fatalf("sift-r3 / jetstream-r3: %+v (want the 3x target, not met: runs 4x and 1.6x)", r)
	}
	plain := &Report{Setup: Setup{Systems: []string{"sift", "jetstream"}}, Results: []Result{run("sift", 1, 900), run("jetstream", 1, 300)}}
	plain.finish()
	if len(plain.Ratios) == 0 || plain.Ratios[0].Sift != "sift" || plain.Ratios[0].Median != 3 || !strings.Contains(plain.Ratios[0].Target, "1x") {
		t.Fatalf("unreplicated ratios: %+v", plain.Ratios)
	}
}

// TestShortCatchupWarning: a run whose catch-up phase lasted under
// minCatchup gets the report a warning, printed under the table
// and kept in results.json; phases long enough get none.
func TestShortCatchupWarning(t *testing.T) {
	run := func(sys string, n int, secs float64) Result {
		return Result{RunID: bench.RunID{System: sys, Run: n}, Backlog: 1000, CatchupSeconds: secs, CatchupPerSec: 1000 / secs}
	}
	rep := &Report{Setup: Setup{Systems: []string{"sift", "jetstream"}}, Results: []Result{
		run("sift", 1, 0.62), run("jetstream", 1, 2.5), run("sift", 2, 3.1), run("jetstream", 2, 0.21),
	}}
	rep.finish()
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "2 of 4 catch-up phases lasted 0.21-0.62 s") {
		t.Fatalf("warnings %q", rep.Warnings)
	}
	var table strings.Builder
	if err := rep.WriteTable(&table); err != nil || !strings.Contains(table.String(), "warning: 2 of 4") {
		t.Fatalf("table (%v):\n%s", err, table.String())
	}
	long := &Report{Setup: Setup{Systems: []string{"sift"}}, Results: []Result{run("sift", 1, 2), run("sift", 2, 4)}}
	long.finish()
	if len(long.Warnings) != 0 {
		t.Fatalf("phases of 2 and 4 s: warnings %q", long.Warnings)
	}
	none := &Report{Setup: Setup{Systems: []string{"sift"}}, Results: []Result{{RunID: bench.RunID{System: "sift", Run: 1}}}}
	none.finish()
	if len(none.Warnings) != 0 {
		t.Fatalf("no catch-up phase: warnings %q", none.Warnings)
	}
}
