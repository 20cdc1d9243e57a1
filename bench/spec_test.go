package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestFilesRoundTrip writes a generated workload in the match file
// formats, reads it back as the files workload, and expects the same
// filters, events and measured matches.
func TestFilesRoundTrip(t *testing.T) {
	for _, base := range []Spec{smallHEM(), {Kind: KindStock, Seed: 2}} {
		if base.Kind == KindStock {
			base.Set("subs", "400")
			base.Set("events", "50")
		}
		t.Run(base.Kind, func(t *testing.T) {
			w, err := base.Generate()
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			files := Spec{Kind: KindFiles, SubsFile: filepath.Join(dir, "subs.txt"), EventsFile: filepath.Join(dir, "events.jsonl")}
			writeFile(t, files.SubsFile, func(f *os.File) error { return match.WriteSubscriptions(f, w.Filters) })
			writeFile(t, files.EventsFile, func(f *os.File) error { return match.WriteEvents(f, w.Events) })
			back, err := files.Generate()
			if err != nil {
				t.Fatal(err)
			}
			if len(back.Filters) != len(w.Filters) || len(back.Events) != len(w.Events) {
				t.Fatalf("read %d filters and %d events, wrote %d and %d", len(back.Filters), len(back.Events), len(w.Filters), len(w.Events))
			}
			for i := range w.Filters {
				if !back.Filters[i].Equal(w.Filters[i]) {
					t.Fatalf("filter %d: wrote %s, read %s", i, w.Filters[i], back.Filters[i])
				}
			}
			for i := range w.Events {
				if !back.Events[i].Equal(w.Events[i]) {
					t.Fatalf("event %d: wrote %s, read %s", i, w.Events[i], back.Events[i])
				}
			}
			gen := runScan(t, base)
			read := runScan(t, files)
			if gen.MatchesPerEvent != read.MatchesPerEvent {
				t.Fatalf("matches per event: generated %v, files %v", gen.MatchesPerEvent, read.MatchesPerEvent)
			}
			files.Set("subs", "10")
			files.Set("events", "7")
			cut, err := files.Generate()
			if err != nil || len(cut.Filters) != 10 || len(cut.Events) != 7 {
				t.Fatalf("files with subs=10 events=7: %d filters, %d events, %v", len(cut.Filters), len(cut.Events), err)
			}
		})
	}
}

func runScan(t *testing.T, spec Spec) Result {
	t.Helper()
	rep, err := Run(Config{Spec: spec, Structures: []Structure{scanStructure}, Options: Options{Runs: 1, Warmup: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Results[0]
}

func writeFile(t *testing.T, path string, write func(*os.File) error) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSetKnobs(t *testing.T) {
	s := Spec{Kind: KindHEM}
	if err := s.Set("width", "0.4"); err != nil || s.HEM.Width != 0.4 {
		t.Fatalf("set width: %v, width %v", err, s.HEM.Width)
	}
	if err := s.Set("subs", "1_000"); err != nil || s.HEM.Subscriptions != 1000 {
		t.Fatalf("set subs: %v, subs %v", err, s.HEM.Subscriptions)
	}
	before := s
	for _, bad := range [][2]string{{"symbols", "5"}, {"subs", "-1"}, {"width", "wide"}} {
		if err := s.Set(bad[0], bad[1]); err == nil {
			t.Errorf("Set(%s, %s) succeeded", bad[0], bad[1])
		}
	}
	if s != before {
		t.Fatalf("failed Set changed the spec")
	}
	got := map[string]string{}
	for _, p := range s.Params() {
		got[p.Name] = p.Value
	}
	if got["attrs"] != "20" || got["domain"] != "1000000" || got["event-attrs"] != "20" || got["seed"] != "0" {
		t.Fatalf("params do not show resolved defaults: %v", got)
	}
}

func TestParseSweep(t *testing.T) {
	sw, err := ParseSweep("subs=10, 100,1000")
	if err != nil || sw.Knob != "subs" || len(sw.Values) != 3 || sw.Values[1] != "100" {
		t.Fatalf("ParseSweep = %+v, %v", sw, err)
	}
	for _, bad := range []string{"subs", "=1,2", "subs=", "subs=1,,2"} {
		if _, err := ParseSweep(bad); err == nil {
			t.Errorf("ParseSweep(%q) succeeded", bad)
		}
	}
	specs, params, err := grid(smallHEM(), []Sweep{{"subs", []string{"10", "20"}}, {"width", []string{"0.1", "0.2"}}})
	if err != nil || len(specs) != 4 {
		t.Fatalf("grid: %d points, %v", len(specs), err)
	}
	if pointLabel(params[1]) != "subs=10 width=0.2" || specs[1].HEM.Width != 0.2 || specs[1].HEM.Subscriptions != 10 {
		t.Fatalf("second point %s with %+v", pointLabel(params[1]), specs[1].HEM)
	}
}
