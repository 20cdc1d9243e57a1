package sim

import (
	"testing"
)

// runReplicated runs n seeds from `from` with replicated pubends.
func runReplicated(t *testing.T, from, n, events, replicas int, faults []Fault) Stats {
	t.Helper()
	var total Stats
	for seed := from; seed < from+n; seed++ {
		res := Run(Config{Seed: uint64(seed), Events: events, Faults: faults, Replicas: replicas})
		for _, v := range res.Violations {
			t.Fatalf("seed %d at %d us: %s\n  replay: sift sim durable --seeds %d..%d --events %d --faults %s --replicas %d",
				v.Seed, v.Time, v.What, seed, seed, events, FaultList(faults), replicas)
		}
		total.Add(res.Stats)
	}
	return total
}

func TestReplicatedNoFaults(t *testing.T) {
	st := runReplicated(t, 1, 20, 30, 3, nil)
	if st.LeaderChanges == 0 {
		t.Fatal("no replica ever led")
	}
	if st.EarlyApplies == 0 {
		t.Fatalf("no replica applied committed entries during a sync: %s", st.Summary())
	}
	if st.Pipelined == 0 {
		t.Fatalf("no leader proposed during its sync: %s", st.Summary())
	}
}

// TestReplicatedAllFaults runs seeds with every fault and three or five
// replicas per pubend: leaders are killed during publishing, a replica's
// disk is wiped, links between replicas are cut. The coverage is checked
// too, so that it cannot vanish: leaders did change, wiped replicas did
// rejoin from snapshots.
func TestReplicatedAllFaults(t *testing.T) {
	for _, reps := range []int{3, 5} {
		st := runReplicated(t, 7000, *seeds/5, 20, reps, AllFaults)
		if st.LeaderChanges <= 2*(*seeds/5) || st.Wipes == 0 || st.Snapshots == 0 || st.Partitions == 0 || st.EarlyApplies == 0 || st.Pipelined == 0 {
			t.Fatalf("%d replicas: too little coverage: %s", reps, st.Summary())
		}
	}
}

// TestReplicatedEachFault runs a few seeds with each fault alone.
func TestReplicatedEachFault(t *testing.T) {
	for _, f := range AllFaults {
		t.Run(string(f), func(t *testing.T) { runReplicated(t, 8000, 10, 20, 3, []Fault{f}) })
	}
}

// TestReplicatedMemberChanges runs seeds in which an operator replaces a
// group's leader, or adds a replica and removes the leader, during
// publishing, alone and with every other fault (a replica's disk wiped
// among them): every check of the oracle holds, and each group ends with
// exactly its replicas as voters. The changes did happen.
func TestReplicatedMemberChanges(t *testing.T) {
	for _, faults := range [][]Fault{{FaultMembers}, append([]Fault{FaultMembers, FaultWipe}, AllFaults...)} {
		st := runReplicated(t, 9000, *seeds/5, 20, 3, faults)
		if st.MemberChanges < *seeds/5 {
			t.Fatalf("%s: %d membership changes in %d seeds: %s", FaultList(faults), st.MemberChanges, *seeds/5, st.Summary())
		}
	}
}
