package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

type sysName string

func (s sysName) Name() string { return string(s) }

// TestAlternateOrder: runs go through the systems in order on odd runs and
// reversed on even ones, progress counts the runs done before each start
// and ends with everything done, and an error names its run and system.
func TestAlternateOrder(t *testing.T) {
	systems := []sysName{"a", "b", "c"}
	var order, progress []string
	results, err := Alternate(systems, 3, func(p Progress) {
		progress = append(progress, fmt.Sprintf("%d/%d %s#%d", p.Done, p.Total, p.System, p.Run))
	}, func(s sysName, n int) (string, error) {
		order = append(order, fmt.Sprintf("%s%d", s, n))
		return fmt.Sprintf("result of %s%d", s, n), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a1", "b1", "c1", "c2", "b2", "a2", "a3", "b3", "c3"}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	if len(results) != len(order) || results[3] != "result of c2" {
		t.Fatalf("results %v, want one per run in run order", results)
	}
	if want := []string{"0/9 a#1", "1/9 b#1", "2/9 c#1", "3/9 c#2", "4/9 b#2", "5/9 a#2", "6/9 a#3", "7/9 b#3", "8/9 c#3", "9/9 #0"}; !slices.Equal(progress, want) {
		t.Fatalf("progress %v, want %v", progress, want)
	}
	boom := errors.New("boom")
	_, err = Alternate(systems, 2, nil, func(s sysName, n int) (int, error) {
		if s == "b" && n == 2 {
			return 0, boom
		}
		return n, nil
	})
	if !errors.Is(err, boom) || err.Error() != "run 2 of b: boom" {
		t.Fatalf("error %v", err)
	}
}

func TestDistinctSystems(t *testing.T) {
	if err := DistinctSystems([]sysName{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if err := DistinctSystems([]sysName{"a", "b", "a"}); err == nil || err.Error() != "system a given twice" {
		t.Fatalf("duplicate: %v", err)
	}
}

// TestRunInfoLeadsTheJSON: embedded in a report, RunInfo's fields come
// first and flat, under the names the reports have always used.
func TestRunInfoLeadsTheJSON(t *testing.T) {
	rep := struct {
		RunInfo
		Setup int `json:"setup"`
	}{RunInfo: StartRunInfo("sift bench x"), Setup: 1}
	rep.Finish()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	want := []string{"command", "machine", "started", "seconds", "load_average_start", "load_average_end", "setup"}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	if rep.Command != "sift bench x" || rep.Seconds < 0 || rep.Started.IsZero() {
		t.Fatalf("run info %+v", rep.RunInfo)
	}
}

// TestRunPoints: each system's line goes through its own runs, in order.
func TestRunPoints(t *testing.T) {
	type res struct {
		RunID
		v float64
	}
	rs := []res{{RunID{System: "a", Run: 1}, 5}, {RunID{System: "b", Run: 1}, 7}, {RunID{System: "a", Run: 2}, 6}}
	pts := RunPoints([]string{"a", "b", "c"}, rs, func(r res) float64 { return r.v })
	if len(pts) != 3 || len(pts[0]) != 2 || pts[0][1].X != 2 || pts[0][1].Y != 6 || len(pts[1]) != 1 || pts[1][0].Y != 7 || len(pts[2]) != 0 {
		t.Fatalf("points %v", pts)
	}
}
