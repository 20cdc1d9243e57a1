package poset

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sift-pubsub/sift/match"
)

// TestDataDriven runs the scripts in testdata/: small readable scenarios of
// inserts, deletes, matches, structure printing and forwarding updates.
// Rewrite the expected output with -rewrite.
func TestDataDriven(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			env := &ddEnv{}
			datadriven.RunTest(t, path, env.handle)
		})
	}
}

type ddEnv struct {
	s   *core
	tab *Table
}

func (env *ddEnv) handle(t *testing.T, d *datadriven.TestData) string {
	out, err := env.run(t, d)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	return out
}

func (env *ddEnv) run(t *testing.T, d *datadriven.TestData) (string, error) {
	switch d.Cmd {
	case "poset", "forest":
		cfg := Config{Classic: d.HasArg("classic")}
		if d.Cmd == "poset" {
			env.s = NewPoset(cfg).core
		} else {
			env.s = NewForest(cfg).core
		}
		return "ok\n", nil
	case "add":
		return env.add(d)
	case "delete":
		for _, f := range strings.Fields(d.Input) {
			id, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return "", err
			}
			if err := env.s.Delete(match.ID(id)); err != nil {
				return "", err
			}
		}
		return env.s.String(), nil
	case "print":
		return env.s.String(), nil
	case "view":
		size := 0
		for _, a := range d.CmdArgs {
			if a.Key == "size" {
				size, _ = strconv.Atoi(a.Vals[0])
			}
		}
		var b strings.Builder
		for i, layer := range env.s.View(size) {
			for j, v := range layer {
				texts := make([]string, len(v))
				for k, f := range v {
					texts[k] = f.String()
				}
				fmt.Fprintf(&b, "layer %d vector %d: %s\n", i, j, strings.Join(texts, " | "))
			}
		}
		return b.String(), nil
	case "counters":
		k := env.s.Counters()
		env.s.ResetCounters()
		return fmt.Sprintf("inserts=%d insert-tests=%d deletes=%d delete-tests=%d\n", k.Inserts, k.InsertTests, k.Deletes, k.DeleteTests), nil
	case "match":
		return env.match(d)
	case "rto":
		return env.rto(d)
	case "table":
		return env.newTable(d)
	case "sub", "unsub":
		return env.subscribe(d)
	case "forwarded":
		var b strings.Builder
		for _, nb := range env.tab.neigh {
			fmt.Fprintf(&b, "%d: %v\n", nb, env.tab.Forwarded(nb))
		}
		return b.String(), nil
	}
	t.Fatalf("unknown command %s", d.Cmd)
	return "", nil
}

// add reads lines `ID FROM FILTER`.
func (env *ddEnv) add(d *datadriven.TestData) (string, error) {
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		parts := strings.SplitN(strings.TrimSpace(line), " ", 3)
		if len(parts) != 3 {
			return "", fmt.Errorf("want `id from filter`, got %q", line)
		}
		id, err1 := strconv.ParseUint(parts[0], 10, 64)
		from, err2 := strconv.ParseUint(parts[1], 10, 32)
		f, err3 := match.Parse(parts[2])
		if err1 != nil || err2 != nil || err3 != nil {
			return "", fmt.Errorf("line %q: bad id, interface or filter", line)
		}
		if err := env.s.Add(match.ID(id), Iface(from), f); err != nil {
			return "", err
		}
	}
	return env.s.String(), nil
}

func (env *ddEnv) match(d *datadriven.TestData) (string, error) {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		e, err := match.ParseEventJSON([]byte(line))
		if err != nil {
			return "", err
		}
		ids := match.SortIDs(env.s.Match(e, nil))
		fmt.Fprintf(&b, "%s -> %v interfaces %v\n", line, ids, env.s.MatchInterfaces(e, nil))
	}
	return b.String(), nil
}

func (env *ddEnv) newTable(d *datadriven.TestData) (string, error) {
	cfg := TableConfig{Merge: d.HasArg("merge")}
	var ns []string
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "structure":
			cfg.Structure = a.Vals[0]
		case "neighbours":
			ns = a.Vals
		}
	}
	for _, n := range ns {
		v, err := strconv.ParseUint(n, 10, 32)
		if err != nil {
			return "", err
		}
		cfg.Neighbours = append(cfg.Neighbours, Iface(v))
	}
	tab, err := NewTable(cfg)
	if err != nil {
		return "", err
	}
	env.tab = tab
	return "ok\n", nil
}

// subscribe reads one filter per line and prints the updates of each.
func (env *ddEnv) subscribe(d *datadriven.TestData) (string, error) {
	var from uint64
	for _, a := range d.CmdArgs {
		if a.Key == "from" {
			v, err := strconv.ParseUint(a.Vals[0], 10, 32)
			if err != nil {
				return "", err
			}
			from = v
		}
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		f, err := match.Parse(line)
		if err != nil {
			return "", err
		}
		op := env.tab.Subscribe
		if d.Cmd == "unsub" {
			op = env.tab.Unsubscribe
		}
		us, err := op(Iface(from), f)
		if err != nil {
			fmt.Fprintf(&b, "%s: error: %v\n", line, err)
			continue
		}
		fmt.Fprintf(&b, "%s:\n", line)
		if len(us) == 0 {
			b.WriteString("  no updates\n")
		}
		for _, u := range us {
			fmt.Fprintf(&b, "  %s\n", u)
		}
	}
	return b.String(), nil
}

// rto places one filter (`rto id=N policy=P size=S` with the filter as
// input) with honest clients, printing each layer's vectors with the
// answers and then the structure.
func (env *ddEnv) rto(d *datadriven.TestData) (string, error) {
	var id uint64
	cfg := RTOConfig{}
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "id":
			id, _ = strconv.ParseUint(a.Vals[0], 10, 64)
		case "size":
			cfg.VectorSize, _ = strconv.Atoi(a.Vals[0])
		case "policy":
			p, err := ParsePolicy(a.Vals[0])
			if err != nil {
				return "", err
			}
			cfg.Policy = p
		}
	}
	f, err := match.Parse(strings.TrimSpace(d.Input))
	if err != nil {
		return "", err
	}
	pl, err := env.s.StartRTO(match.ID(id), 0, f, cfg)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for !pl.Done() {
		var answers [][]Answer
		for _, q := range pl.Queries() {
			a := Evaluate(q)
			for i, g := range q.Filters {
				fmt.Fprintf(&b, "layer %d: %s:%s%s%s\n", q.Layer, g, mark(a.Up.Get(i), " covers"), mark(a.Down.Get(i), " covered"), mark(a.Overlap.Get(i), " overlaps"))
			}
			answers = append(answers, []Answer{a})
		}
		if _, err := pl.Answer(answers); err != nil {
			return "", err
		}
	}
	st := pl.Stats()
	fmt.Fprintf(&b, "rounds=%d vectors=%d verified=%v fallback=%v\n", st.Rounds, st.Vectors, st.Verified, st.Fallback)
	return b.String() + env.s.String(), nil
}

func mark(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}
