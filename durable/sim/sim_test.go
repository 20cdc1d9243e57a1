package sim

import (
	"flag"
	"fmt"
	"slices"
	"testing"
)

var (
	seeds  = flag.Int("sim.seeds", 500, "number of seeds TestSimulator runs")
	events = flag.Int("sim.events", 12, "events per seed in TestSimulator")
	faults = flag.String("sim.faults", "all", "faults TestSimulator injects")
)

func runSeeds(t *testing.T, from, n, events int, faults []Fault) {
	t.Helper()
	for seed := from; seed < from+n; seed++ {
		res := Run(Config{Seed: uint64(seed), Events: events, Faults: faults})
		for _, v := range res.Violations {
			t.Errorf("seed %d at %d us: %s\n  replay: sift sim durable --seeds %d..%d --events %d --faults %s",
				v.Seed, v.Time, v.What, seed, seed, events, FaultList(faults))
		}
		if t.Failed() {
			return
		}
	}
}

// runConfig runs seeds 1..n of cfg (its Seed set per run), fails the test
// at the first violation with the command that replays it, and returns the
// runs' summed statistics.
func runConfig(t *testing.T, n uint64, cfg Config) Stats {
	t.Helper()
	var total Stats
	for seed := uint64(1); seed <= n; seed++ {
		cfg.Seed = seed
		res := Run(cfg)
		for _, v := range res.Violations {
			flags := ""
			if cfg.LearnSHBs {
				flags += " --learn-shbs"
			}
			if cfg.Topology != "" {
				flags += " --topology " + string(cfg.Topology)
			}
			if cfg.Pubends != 0 {
				flags += fmt.Sprintf(" --pubends %d", cfg.Pubends)
			}
			t.Fatalf("seed %d at %d us: %s\n  replay: sift sim durable --seeds %d..%d --events %d --faults %s%s",
				v.Seed, v.Time, v.What, seed, seed, cfg.Events, FaultList(cfg.Faults), flags)
		}
		total.Add(res.Stats)
	}
	return total
}

// TestSimulatorNoFaults runs seeds without faults: the baseline.
func TestSimulatorNoFaults(t *testing.T) {
	runSeeds(t, 1, 20, 30, nil)
}

// TestSimulator runs -sim.seeds seeds with the -sim.faults faults (every
// fault kind by default).
func TestSimulator(t *testing.T) {
	fs, err := ParseFaults(*faults)
	if err != nil {
		t.Fatal(err)
	}
	runSeeds(t, 1000, *seeds, *events, fs)
}

// TestSimulatorNoEarlyRelease runs every fault but early release, where the
// oracle also checks that gaps reach only acknowledged ticks.
func TestSimulatorNoEarlyRelease(t *testing.T) {
	fs := slices.DeleteFunc(slices.Clone(AllFaults), func(f Fault) bool { return f == FaultRelease })
	runSeeds(t, 5000, *seeds/5, *events, fs)
}

// TestSimulatorEachFault runs a few seeds with each fault alone, so a
// failure names the fault that breaks a rule.
func TestSimulatorEachFault(t *testing.T) {
	for _, f := range AllFaults {
		t.Run(string(f), func(t *testing.T) { runSeeds(t, 2000, 10, 20, []Fault{f}) })
	}
}

func ExampleRun() {
	res := Run(Config{Seed: 1, Events: 10})
	fmt.Println(len(res.Violations), res.Stats.Published)
	// Output: 0 10
}

// TestSimulatorSlowSubscribers runs odd seeds, whose SHBs queue at most 1
// to 4 unacknowledged events per session, without faults and with every
// fault: up-to-date subscribers must overflow to catch-up (the test fails
// if none did, so the coverage cannot vanish) and still receive every
// event exactly once.
func TestSimulatorSlowSubscribers(t *testing.T) {
	for _, fs := range [][]Fault{nil, AllFaults} {
		overflows := 0
		for seed := uint64(3001); seed < 3201; seed += 2 {
			res := Run(Config{Seed: seed, Events: 30, Faults: fs})
			for _, v := range res.Violations {
				t.Fatalf("seed %d at %d us: %s\n  replay: sift sim durable --seeds %d..%d --events 30 --faults %s",
					v.Seed, v.Time, v.What, seed, seed, FaultList(fs))
			}
			overflows += res.Stats.Overflows
		}
		if overflows == 0 {
			t.Errorf("faults %s: no subscriber queue overflowed", FaultList(fs))
		}
		t.Logf("faults %s: %d overflows to catch-up", FaultList(fs), overflows)
	}
}

// TestSimulatorRegressions replays seeds that once found a bug.
func TestSimulatorRegressions(t *testing.T) {
	noRelease := slices.DeleteFunc(slices.Clone(AllFaults), func(f Fault) bool { return f == FaultRelease })
	// Seed 693: a subscriber resumed with an older CT, its queue filled with
	// events that took its CT back to the one it last acknowledged, and it
	// never acknowledged again (its queue never drained).
	runSeeds(t, 693, 1, 40, noRelease)
	// Seed 15001 on the chain with pubends at r1 and r3: every router sent
	// each install to all of its upstream neighbours, the link it came from
	// included, under a key one link name longer, so installs bounced
	// between neighbours for ever (the "durable sub: 256 bytes" of real
	// meshes) and multiplied until the run flooded.
	res := Run(Config{Seed: 15001, Events: 20, Topology: TopologyChain, Pubends: 2})
	for _, v := range res.Violations {
		t.Errorf("seed 15001 chain: at %d us: %s", v.Time, v.What)
	}
	// Seed 99 with early release: a subscriber at tick 89806 got gap
	// [89807,89999] for ticks that were all silence (the L prefix said
	// nothing of what it held). 19 of seeds 1..100 with --faults release
	// had such a gap; the oracle now fails any gap without a logged tick.
	res = Run(Config{Seed: 99, Events: 20, Faults: []Fault{FaultRelease}})
	for _, v := range res.Violations {
		t.Errorf("seed 99 release: at %d us: %s", v.Time, v.What)
	}
	if res.Stats.Gaps == 0 && res.Stats.SHBDrops == 0 {
		t.Errorf("seed 99 release: no SHB dropped: the seed no longer exercises early release")
	}
	// Seed 209, 200 events, crash, partition, wipe, drop: shb1 lost its
	// disk; its new store reported Tr = LD (no registration yet) while
	// s1's resume with its CT waited for its install acknowledgement, and
	// s1's registration then lowered shb1's Tr, which the pubend, taking
	// the maximum of reports, ignored: when the wipe's grace ended, p2
	// released past s1's CT (gap [1020837,1020854] above CT 1020835,
	// without early release). Reports are now stamped and the newest taken
	// as it is, and a registration waiting for its acknowledgement bounds
	// Tr by its CT.
	res = Run(Config{Seed: 209, Events: 200, Faults: []Fault{FaultCrash, FaultPartition, FaultWipe, FaultDrop}})
	for _, v := range res.Violations {
		t.Errorf("seed 209 wipe: at %d us: %s", v.Time, v.What)
	}
	if res.Stats.Wipes == 0 {
		t.Errorf("seed 209 wipe: no SHB wiped: the seed no longer exercises the case")
	}
	slowRegressions(t)
}

// slowRegressions replays the seeds of a loaded machine (FaultSlow) with
// crashes that broke exactly-once: a subscriber skipped a matching event
// because its SHB took an install acknowledgement made before some hop
// held the subscription's filter as it was.
func slowRegressions(t *testing.T) {
	net := []Fault{FaultSlow, FaultCrash, FaultPartition, FaultDrop, FaultDup, FaultReorder}
	for _, c := range []struct {
		seed   uint64
		faults []Fault
		why    string
	}{
		// A restarted SHB took the acknowledgement of its previous
		// incarnation's install, still in flight on the slow links (the
		// router had since dropped the filter on the SHB's new full set):
		// acknowledgements now echo the install they answer.
		{6, net, "ack of the previous incarnation"},
		{69, net, "ack of the previous incarnation"},
		{85, net, "ack of the previous incarnation"},
		// With that fixed, a router took an upstream acknowledgement of an
		// install sent before a full set from below dropped the filter
		// (and its own full set upstream dropped it there): the full set
		// now withdraws the pending install.
		{68, []Fault{FaultSlow, FaultCrash}, "ack of an install the full set withdrew"},
		{94, []Fault{FaultSlow, FaultCrash, FaultPartition}, "ack of an install the full set withdrew"},
		{46, []Fault{FaultSlow, FaultCrash, FaultReorder}, "ack of an install the full set withdrew"},
		{50, net, "ack of an install the full set withdrew"},
		{161, net, "ack of an install the full set withdrew"},
	} {
		res := Run(Config{Seed: c.seed, Events: 40, Faults: c.faults})
		for _, v := range res.Violations {
			t.Errorf("seed %d %s (%s): at %d us: %s", c.seed, FaultList(c.faults), c.why, v.Time, v.What)
		}
		if res.Stats.Crashes == 0 {
			t.Errorf("seed %d %s: no crash: the seed no longer exercises the case", c.seed, FaultList(c.faults))
		}
	}
}

// TestSimulatorTopologies runs each broker tree with every fault, so both
// the one-router tree and the deep one (install acknowledgements across
// two and three router hops) keep their coverage whatever the seeds pick.
func TestSimulatorTopologies(t *testing.T) {
	for _, tp := range []Topology{TopologyFlat, TopologyDeep} {
		t.Run(string(tp), func(t *testing.T) {
			for seed := uint64(7001); seed < 7101; seed++ {
				res := Run(Config{Seed: seed, Events: 20, Faults: AllFaults, Topology: tp})
				for _, v := range res.Violations {
					t.Fatalf("seed %d at %d us: %s\n  replay: sift sim durable --seeds %d..%d --events 20 --topology %s",
						v.Seed, v.Time, v.What, seed, seed, tp)
				}
			}
		})
	}
}

// TestSimulatorRoaming runs seeds where subscribers come back at another
// SHB (reconnect anywhere), with and without other faults: the new SHB
// must fetch the missed events from upstream (the test fails if no seed
// did, so the coverage cannot vanish) and exactly-once must hold, and the
// registrations left behind must go (liveness checks that release and
// storage shrink back).
func TestSimulatorRoaming(t *testing.T) {
	for _, fs := range [][]Fault{{FaultRoam}, {FaultRoam, FaultReconnect, FaultDrop, FaultCrash, FaultPartition}} {
		var total Stats
		for seed := uint64(9001); seed < 9101; seed++ {
			res := Run(Config{Seed: seed, Events: 30, Faults: fs})
			for _, v := range res.Violations {
				t.Fatalf("seed %d at %d us: %s\n  replay: sift sim durable --seeds %d..%d --events 30 --faults %s",
					v.Seed, v.Time, v.What, seed, seed, FaultList(fs))
			}
			total.Add(res.Stats)
		}
		if total.Roams == 0 || total.RemoteNacks == 0 {
			t.Errorf("faults %s: roams=%d remote-nacks=%d, want both > 0", FaultList(fs), total.Roams, total.RemoteNacks)
		}
		t.Logf("faults %s: %s", FaultList(fs), total.Summary())
	}
}

// TestSimulatorDropsAbsentSHBs runs seeds where SHBs are cut off for longer
// than the PHBs' DropAfter: release goes on without them, their
// subscribers get gaps only for released ticks, and they are taken back
// when they report again. The test fails if no SHB was dropped.
func TestSimulatorDropsAbsentSHBs(t *testing.T) {
	fs := []Fault{FaultRelease, FaultCrash, FaultPartition, FaultReconnect}
	var total Stats
	for seed := uint64(11001); seed < 11101; seed++ {
		res := Run(Config{Seed: seed, Events: 30, Faults: fs, DropAfter: 40_000})
		for _, v := range res.Violations {
			t.Fatalf("seed %d at %d us: %s\n  replay: go test ./durable/sim -run TestSimulatorDropsAbsentSHBs (DropAfter 40 ms)",
				v.Seed, v.Time, v.What)
		}
		total.Add(res.Stats)
	}
	if total.SHBDrops == 0 {
		t.Errorf("no SHB was dropped: %s", total.Summary())
	}
	t.Logf("%s", total.Summary())
}

// TestSimulatorClockSteps runs seeds whose PHB clocks step backwards, also
// across restarts: ticks must still never be announced twice with other
// content (the oracle checks every PHB announcement). The test fails if no
// clock stepped back.
func TestSimulatorClockSteps(t *testing.T) {
	fs := []Fault{FaultClock, FaultCrash, FaultPublisher, FaultDrop}
	var total Stats
	for seed := uint64(13001); seed < 13101; seed++ {
		res := Run(Config{Seed: seed, Events: 30, Faults: fs})
		for _, v := range res.Violations {
			t.Fatalf("seed %d at %d us: %s\n  replay: sift sim durable --seeds %d..%d --events 30 --faults %s",
				v.Seed, v.Time, v.What, seed, seed, FaultList(fs))
		}
		total.Add(res.Stats)
	}
	if total.ClockSteps == 0 {
		t.Errorf("no clock stepped back: %s", total.Summary())
	}
	t.Logf("%s", total.Summary())
}

// TestSimulatorMeshes runs the two meshes, where every router may host
// pubends and SHBs and a link is upstream for the pubends on one side and
// downstream for the others, with 2 and 3 pubends on different routers,
// without faults and with every fault.
func TestSimulatorMeshes(t *testing.T) {
	for _, tp := range []Topology{TopologyChain, TopologyTree} {
		for _, pubends := range []int{2, 3} {
			for _, fs := range [][]Fault{nil, AllFaults} {
				t.Run(fmt.Sprintf("%s/%d/%s", tp, pubends, FaultList(fs)), func(t *testing.T) {
					for seed := uint64(15001); seed < 15041; seed++ {
						res := Run(Config{Seed: seed, Events: 20, Faults: fs, Topology: tp, Pubends: pubends})
						for _, v := range res.Violations {
							t.Fatalf("seed %d at %d us: %s\n  replay: sift sim durable --seeds %d..%d --events 20 --topology %s --pubends %d --faults %s",
								v.Seed, v.Time, v.What, seed, seed, tp, pubends, FaultList(fs))
						}
					}
				})
			}
		}
	}
}

// TestSimulatorBlockedLinks runs seeds whose broker links block for 10 to
// 160 ms (what is sent waits, in order) with and without the other
// faults, in every topology: exactly-once must hold and everything must
// catch up once the links flow again. The test fails if no link blocked.
func TestSimulatorBlockedLinks(t *testing.T) {
	for _, fs := range [][]Fault{{FaultBlock}, append(slices.Clone(AllFaults), FaultBlock)} {
		var total Stats
		for seed := uint64(17001); seed < 17101; seed++ {
			res := Run(Config{Seed: seed, Events: 20, Faults: fs})
			for _, v := range res.Violations {
				t.Fatalf("seed %d at %d us: %s\n  replay: sift sim durable --seeds %d..%d --events 20 --faults %s",
					v.Seed, v.Time, v.What, seed, seed, FaultList(fs))
			}
			total.Add(res.Stats)
		}
		if total.Blocks == 0 {
			t.Errorf("faults %s: no link blocked", FaultList(fs))
		}
		t.Logf("faults %s: %d blocks; %s", FaultList(fs), total.Blocks, total.Summary())
	}
}

// TestSimulatorLearnedMembers starts every pubend knowing no SHB (they
// learn their members from installs and reports, as in a mesh whose
// directory has not converged) in every topology, with every fault and
// with every fault but early release (where no subscriber may get a gap
// over a tick it had not acknowledged). A member SHB's latestDelivered
// bounds release from the L prefix it joined at; an SHB that is not a
// member yet has no subscription a release could reach.
func TestSimulatorLearnedMembers(t *testing.T) {
	noRelease := slices.DeleteFunc(slices.Clone(AllFaults), func(f Fault) bool { return f == FaultRelease })
	for _, fs := range [][]Fault{AllFaults, noRelease} {
		t.Run(FaultList(fs), func(t *testing.T) {
			total := runConfig(t, 150, Config{Events: 20, Faults: fs, LearnSHBs: true})
			t.Logf("%s", total.Summary())
		})
	}
}

// TestSimulatorWipes restarts SHBs with an empty disk (their subscribers
// come back presenting their CTs), alone and with every other fault, with
// and without early release: pubends hold release for the wiped stores'
// subscribers (pubend_wiped.go), so nobody misses an event it had not
// acknowledged. The test fails if no SHB was wiped.
func TestSimulatorWipes(t *testing.T) {
	noRelease := slices.DeleteFunc(slices.Clone(AllFaults), func(f Fault) bool { return f == FaultRelease })
	for _, fs := range [][]Fault{{FaultWipe}, append(noRelease, FaultWipe), append(slices.Clone(AllFaults), FaultWipe)} {
		t.Run(FaultList(fs), func(t *testing.T) {
			total := runConfig(t, 150, Config{Events: 20, Faults: fs})
			if total.Wipes == 0 {
				t.Fatal("no SHB was wiped")
			}
			t.Logf("%s", total.Summary())
		})
	}
}

// TestSimulatorFullDisks fills PHBs' and SHBs' disks for 10 to 160 ms,
// alone and with every other fault: each failed batch is retried through
// durable.Host as the router's driver does, PHBs refuse publishes
// meanwhile, the machines read what they wrote though the store refused
// it, and everything is delivered exactly once after. The test fails if
// no disk filled.
func TestSimulatorFullDisks(t *testing.T) {
	for _, fs := range [][]Fault{{FaultFull}, append(slices.Clone(AllFaults), FaultFull, FaultWipe, FaultBlock)} {
		t.Run(FaultList(fs), func(t *testing.T) {
			total := runConfig(t, 150, Config{Events: 20, Faults: fs})
			if total.FullDisks == 0 {
				t.Fatal("no disk filled")
			}
			t.Logf("%s", total.Summary())
		})
	}
}

// TestSimulatorMembershipAndOutages: an SHB that starts partway through
// the run with an empty disk (a router joining; with learned members, the
// pubends learn it then) and an SHB down for most of the run (a router
// leaving and coming back, a long outage), alone, together and with every
// other fault, with static and learned members; and a longer outage (400
// events published while the SHB is down): exactly-once holds and every
// subscriber catches up within the liveness bound. The test fails if no
// SHB joined or went down.
func TestSimulatorMembershipAndOutages(t *testing.T) {
	every := append(slices.Clone(AllFaults), FaultOutage, FaultJoin)
	type run struct {
		fs     []Fault
		learn  bool
		events int
		seeds  uint64
	}
	for _, r := range []run{
		{[]Fault{FaultJoin}, false, 20, 100}, {[]Fault{FaultJoin}, true, 20, 100},
		{[]Fault{FaultOutage, FaultJoin}, true, 20, 100}, {every, false, 20, 100}, {every, true, 20, 100},
		{[]Fault{FaultOutage}, false, 400, 8},
	} {
		t.Run(fmt.Sprintf("%s/learn=%v/events=%d", FaultList(r.fs), r.learn, r.events), func(t *testing.T) {
			total := runConfig(t, r.seeds, Config{Events: r.events, Faults: r.fs, LearnSHBs: r.learn})
			if total.Joins+total.Outages == 0 {
				t.Fatal("no SHB joined or went down")
			}
			t.Logf("%s", total.Summary())
		})
	}
}

// TestSimulatorSlowOutage is a long outage on a loaded machine: every
// round trip takes longer than a router's NackTimeout and the routers'
// caches are too small to answer the outage, so the answers come from the
// PHB and reach each router after its nack timed out. Every subscriber
// must still catch up within the liveness bound: a router keeps waiting
// for an answer as long as its SHB keeps asking (RouterConfig.WaitTimeout).
// With waits as short as the nack timeout, 16 of the first 20 seeds
// never caught up, the SHBs asking again for ever.
func TestSimulatorSlowOutage(t *testing.T) {
	for _, fs := range [][]Fault{{FaultOutage, FaultSlow}, {FaultOutage, FaultSlow, FaultDrop, FaultCrash}} {
		t.Run(FaultList(fs), func(t *testing.T) {
			total := runConfig(t, 20, Config{Events: 200, Faults: fs})
			if total.Outages == 0 {
				t.Fatal("no SHB went down")
			}
			t.Logf("%s", total.Summary())
		})
	}
}

// TestSimulatorSlowCrash runs crashes on a loaded machine (slow syncs, and
// broker links slow enough to reorder by tens of milliseconds) with the
// network faults, on the seeds' trees and on the chain and tree meshes
// with three pubends: an install acknowledgement or a filter set then
// often arrives long after a crash it was made before. Seeds of the first
// case broke exactly-once before acknowledgements echoed their install,
// and before a full set from below withdrew the installs it drops.
func TestSimulatorSlowCrash(t *testing.T) {
	fs := []Fault{FaultSlow, FaultCrash, FaultPartition, FaultDrop, FaultDup, FaultReorder}
	for _, c := range []struct {
		n   uint64
		cfg Config
	}{
		{100, Config{Events: 40, Faults: fs}},
		{50, Config{Events: 40, Faults: fs, Topology: TopologyChain, Pubends: 3}},
		{50, Config{Events: 40, Faults: fs, Topology: TopologyTree, Pubends: 3}},
	} {
		name := string(c.cfg.Topology)
		if name == "" {
			name = "by-seed"
		}
		t.Run(name, func(t *testing.T) {
			total := runConfig(t, c.n, c.cfg)
			if total.Crashes == 0 {
				t.Fatal("no broker crashed")
			}
		})
	}
}
