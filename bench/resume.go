package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// resumeStore keeps one file per (structure, point) result in a
// directory, so an interrupted sweep rerun with the same configuration
// skips what it already measured. A file is named by the structure, the
// swept values and a hash of everything that determines the measure (all
// workload parameters, the seed, runs, warm-up and check sample), so a
// changed configuration never reuses a stale result. A result stored by
// another build than the running one is measured again unless anyBuild is
// set: the code, not only the configuration, determines the measure.
type resumeStore struct {
	dir      string
	build    string // CurrentBuild of the running binary
	anyBuild bool
}

func (r resumeStore) path(structure string, spec Spec, params []Param, o Options) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%v|%d|%d|%d", structure, spec.Params(), o.Runs, o.Warmup, o.Check)
	var label []string
	for _, p := range params {
		label = append(label, p.Name+"="+p.Value)
	}
	name := fmt.Sprintf("%s_%s_%016x.json", structure, strings.Join(label, "_"), h.Sum64())
	return filepath.Join(r.dir, strings.NewReplacer("/", "-", " ", "-").Replace(name))
}

// load returns the stored result, if any, unless it was skipped.
func (r resumeStore) load(structure string, spec Spec, params []Param, o Options) (Result, bool, error) {
	if r.dir == "" {
		return Result{}, false, nil
	}
	b, err := os.ReadFile(r.path(structure, spec, params, o))
	if errors.Is(err, fs.ErrNotExist) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, fmt.Errorf("resume: %w", err)
	}
	var res Result
	if err := json.Unmarshal(b, &res); err != nil {
		return Result{}, false, fmt.Errorf("resume: %s: %w", r.path(structure, spec, params, o), err)
	}
	// A point skipped on the time budget is tried again: the rerun may
	// have a larger --budget or an idler machine.
	if res.Status == StatusSkipped {
		return res, false, nil
	}
	return res, r.anyBuild || res.Build == r.build, nil
}

// save writes a result atomically (a temporary file renamed into place),
// so an interrupted write leaves no truncated result behind.
func (r resumeStore) save(res Result, spec Spec, o Options) error {
	if r.dir == "" {
		return nil
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	path := r.path(res.Structure, spec, res.Point, o)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	return nil
}
