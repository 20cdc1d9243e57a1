package bench

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportFiles(t *testing.T) {
	rep, err := Run(Config{
		Spec:       smallHEM(),
		Sweeps:     []Sweep{{Knob: "subs", Values: []string{"50", "500"}}},
		Structures: []Structure{scanStructure, {Name: ExprName, New: Structures()[len(Structures())-1].New}},
		Options:    Options{Runs: 1, Warmup: 1},
		Command:    "sift bench match --test",
	})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(table.String(), "\n"); lines != 8 {
		t.Fatalf("table has %d lines, want the workload, the machine, a header, 4 rows and the legend:\n%s", lines, table.String())
	}
	dir := t.TempDir()
	if err := rep.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Command != "sift bench match --test" || back.Machine.GoVersion == "" || back.Machine.Cores < 1 || len(back.Results) != 4 {
		t.Fatalf("results.json lacks the command, machine or results: %+v", back)
	}
	f, err := os.Open(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || rows[0][0] != "subs" || rows[1][1] != "scan" {
		t.Fatalf("results.csv rows: %v", rows)
	}
	for _, png := range []string{"match_time.png", "match_p99.png", "memory.png", "build_time.png"} {
		st, err := os.Stat(filepath.Join(dir, png))
		if err != nil || st.Size() < 1000 {
			t.Fatalf("plot %s missing or empty: %v", png, err)
		}
	}
	if x := rep.Speedup(rep.Results[0], ExprName); x <= 0 {
		t.Fatalf("scan speedup over expr not computed")
	}
}

func TestPlotsWithoutSweep(t *testing.T) {
	rep, err := Run(Config{Spec: smallHEM(), Structures: []Structure{scanStructure}, Options: Options{Runs: 1, Warmup: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.WritePlots(t.TempDir()); err != nil {
		t.Fatal(err)
	}
}
