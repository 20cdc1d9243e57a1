package durable

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// applyingStore wraps a Store so that a test can apply pending writes
// after each command, as a driver would after Ready.
type pfsEnv struct {
	w   *pendingWrites
	pfs *pfs
	st  Store
}

// TestPFSScript runs testdata/pfs.txt, which starts with the seed's
// Figure 2 example: records for ticks 1, 3, 4 and 5 over three
// subscribers, and s3 reading its knowledge for [1,10]. It runs with every
// read from the store, with a memory of the two newest records (reads mix
// memory and store, and slots are overwritten) and with one larger than
// the script: the answers must not differ.
func TestPFSScript(t *testing.T) {
	for _, recent := range []int{0, 2, pfsRecent} {
		t.Run(fmt.Sprintf("recent=%d", recent), func(t *testing.T) { runPFSScript(t, recent) })
	}
}

func runPFSScript(t *testing.T, recent int) {
	var env *pfsEnv
	datadriven.RunTest(t, "testdata/pfs.txt", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "new":
			st := newMapStore()
			w := newPendingWrites(st)
			env = &pfsEnv{w: w, pfs: newPFS("p", w, recent), st: st}
			return ""
		case "record":
			var tick int64
			var subs string
			d.ScanArgs(t, "t", &tick)
			d.ScanArgs(t, "subs", &subs)
			var sids []uint64
			for _, f := range strings.Split(subs, ",") {
				n, err := strconv.ParseUint(strings.TrimPrefix(f, "s"), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				sids = append(sids, n)
			}
			env.pfs.append(Tick(tick), sids)
		case "chop":
			var upto int64
			d.ScanArgs(t, "upto", &upto)
			if err := env.pfs.chop(Tick(upto)); err != nil {
				return err.Error()
			}
		case "read":
			var sid, from, to, ld int64
			d.ScanArgs(t, "sub", &sid)
			d.ScanArgs(t, "from", &from)
			d.ScanArgs(t, "to", &to)
			d.ScanArgs(t, "ld", &ld)
			return readKnowledge(env, uint64(sid), Tick(from), Tick(to), Tick(ld))
		default:
			t.Fatalf("unknown command %q", d.Cmd)
		}
		if err := env.st.Apply(env.w.take(), true); err != nil {
			t.Fatal(err)
		}
		return env.describe()
	})
}

// readKnowledge renders s's knowledge stream over [from, to] the way the
// seed describes it: D (Q in the seed: to be fetched) for its records, S
// for the other ticks up to LD, Q above LD, L below the chopped prefix.
func readKnowledge(env *pfsEnv, sid uint64, from, to, ld Tick) string {
	ds, err := env.pfs.read(sid, from-1, min(to, ld))
	if err != nil {
		return err.Error()
	}
	isD := map[Tick]bool{}
	for _, t := range ds {
		isD[t] = true
	}
	var b strings.Builder
	for t := from; t <= to; t++ {
		switch {
		case t > ld:
			b.WriteByte('Q')
		case isD[t]:
			b.WriteByte('D')
		default:
			b.WriteByte('S')
		}
	}
	return fmt.Sprintf("ticks %d..%d: %s\nD ticks: %v", from, to, b.String(), ds)
}

func (env *pfsEnv) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lastTimestamp=%d first=%d next=%d\n", env.pfs.lastTS, env.pfs.first, env.pfs.next)
	for i := env.pfs.first; i < env.pfs.next; i++ {
		rec, err := env.pfs.get(i)
		if err != nil {
			fmt.Fprintf(&b, "i%d: %v\n", i, err)
			continue
		}
		fmt.Fprintf(&b, "i%d t=%d:", i, rec.tick)
		for _, e := range rec.entries {
			fmt.Fprintf(&b, " s%d<-i%d", e.sid, e.prev)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
