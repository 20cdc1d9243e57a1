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
