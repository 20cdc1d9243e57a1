package core

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestEngineScripts runs testdata/engine*.txt. Commands:
//
//	attach iface=N [kind=client|neighbour]
//	detach iface=N
//	sub iface=N id=M        (input: the filter text)
//	unsub iface=N id=M
//	pub from=N              (input: JSON events, one per line)
//	show                    (the summary with filters)
func TestEngineScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if !strings.Contains(path, "engine") {
			return
		}
		e := NewEngine(match.NewScan(), 2)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return runEngineCmd(t, e, d)
		})
	})
}

func runEngineCmd(t *testing.T, e *Engine, d *datadriven.TestData) string {
	var iface, id uint64
	switch d.Cmd {
	case "attach":
		d.ScanArgs(t, "iface", &iface)
		kind := "client"
		d.MaybeScanArgs(t, "kind", &kind)
		k := KindClient
		if kind == "neighbour" {
			k = KindNeighbour
		}
		return result(e, e.Attach(ifaceID(iface), k))
	case "detach":
		d.ScanArgs(t, "iface", &iface)
		return fmt.Sprintf("removed %d; %d subscriptions", e.Detach(ifaceID(iface)), e.Subscriptions())
	case "sub":
		d.ScanArgs(t, "iface", &iface)
		d.ScanArgs(t, "id", &id)
		return result(e, e.Subscribe(ifaceID(iface), id, strings.TrimSpace(d.Input)))
	case "unsub":
		d.ScanArgs(t, "iface", &iface)
		d.ScanArgs(t, "id", &id)
		return result(e, e.Unsubscribe(ifaceID(iface), id))
	case "pub":
		d.ScanArgs(t, "from", &iface)
		return pubLines(t, e, ifaceID(iface), d.Input)
	case "show":
		var b strings.Builder
		for _, s := range e.Summary(true) {
			fmt.Fprintf(&b, "iface %d (%s): %d subscriptions\n", s.ID, s.Kind, s.Subscriptions)
			for _, f := range s.Filters {
				fmt.Fprintf(&b, "  %s\n", f)
			}
		}
		return b.String()
	}
	t.Fatalf("unknown command %q", d.Cmd)
	return ""
}

func result(e *Engine, err error) string {
	if err != nil {
		return fmt.Sprintf("error (%s): %v; %d subscriptions", wire.CodeOf(err), err, e.Subscriptions())
	}
	return fmt.Sprintf("ok; %d subscriptions", e.Subscriptions())
}

func pubLines(t *testing.T, e *Engine, from ifaceID, input string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		ev, err := match.ParseEventJSON([]byte(line))
		if err != nil {
			t.Fatalf("event %s: %v", line, err)
		}
		hits := e.Route(from, ev)
		fmt.Fprintf(&b, "%s ->", line)
		if len(hits) == 0 {
			b.WriteString(" nobody")
		}
		for _, h := range hits {
			fmt.Fprintf(&b, " %d:%v", h.Iface, h.Subs)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestEngineAgainstBruteForce checks route against evaluating every filter
// of every interface, through random subscribe, unsubscribe, detach and
// publish steps, with 1 to 40 interfaces (route sorts up to 16 hits by
// insertion, more with slices.SortFunc), and after every step what the
// engine holds (checkHeld).
func TestEngineAgainstBruteForce(t *testing.T) {
	filters := []string{`a == 1`, `a > 0`, `b prefix "x"`, `a exists && b == "xy"`, `*`, `a < 3 && a != 2`}
	rapid.Check(t, func(t *rapid.T) {
		e := NewEngine(match.NewScan(), 0)
		ref := map[ifaceID]map[uint64]match.Filter{}
		kinds := map[ifaceID]IfaceKind{}
		n := rapid.IntRange(1, 40).Draw(t, "ifaces")
		for i := range n {
			k := rapid.SampledFrom([]IfaceKind{KindClient, KindNeighbour}).Draw(t, "kind")
			e.Attach(ifaceID(i), k)
			ref[ifaceID(i)], kinds[ifaceID(i)] = map[uint64]match.Filter{}, k
			if rapid.IntRange(0, 3).Draw(t, "sub everything") == 0 { // many hits per event
				e.Subscribe(ifaceID(i), 0, `*`)
				ref[ifaceID(i)][0] = match.MustParse(`*`)
			}
		}
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			iface := ifaceID(rapid.IntRange(0, n-1).Draw(t, "iface"))
			sub := rapid.Uint64Range(0, 5).Draw(t, "sub")
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				text := rapid.SampledFrom(filters).Draw(t, "filter")
				if e.Subscribe(iface, sub, text) == nil {
					ref[iface][sub] = match.MustParse(text)
				}
			case 1:
				if e.Unsubscribe(iface, sub) == nil {
					delete(ref[iface], sub)
				}
			case 2:
				ev := match.MustEvent(
					match.Attr{Name: "a", Value: match.Int(rapid.Int64Range(-1, 4).Draw(t, "a"))},
					match.Attr{Name: "b", Value: match.Str(rapid.SampledFrom([]string{"x", "xy", "y"}).Draw(t, "b"))})
				checkRoute(t, e, ref, kinds, iface, ev)
			case 3:
				if rapid.IntRange(0, 9).Draw(t, "rare") == 0 {
					e.Detach(iface)
					e.Attach(iface, kinds[iface])
					ref[iface] = map[uint64]match.Filter{}
				}
			}
			checkHeld(t, e, ref)
		}
	})
}

// checkHeld checks the engine's subscriptions against ref: Filter and
// Subs give each interface's filters (Subs in id order), Filters counts
// the distinct filters held, and equal filters share one copy (the filter
// pool).
func checkHeld(t *rapid.T, e *Engine, ref map[ifaceID]map[uint64]match.Filter) {
	copies := map[string]uintptr{}
	for iface, subs := range ref {
		var ids []uint64
		for sub, f := range e.Subs(iface) {
			ids = append(ids, sub)
			if !f.Equal(subs[sub]) {
				t.Fatalf("interface %d subscription %d: Subs gives %v, want %v", iface, sub, f, subs[sub])
			}
			if g, ok := e.Filter(iface, sub); !ok || !g.Equal(f) {
				t.Fatalf("interface %d subscription %d: Filter gives %v %v, want %v", iface, sub, g, ok, f)
			}
			p := reflect.ValueOf(f).Field(0).Pointer() // the constraints' backing array
			if q, seen := copies[f.String()]; seen && q != p {
				t.Fatalf("interface %d subscription %d: a second copy of %v", iface, sub, f)
			}
			copies[f.String()] = p
		}
		if want := slices.Sorted(maps.Keys(subs)); !slices.Equal(ids, want) {
			t.Fatalf("interface %d: Subs yields %v, want %v", iface, ids, want)
		}
	}
	if _, ok := e.Filter(ifaceID(len(ref)), 0); ok {
		t.Fatal("Filter found a subscription of an unknown interface")
	}
	if e.Filters() != len(copies) {
		t.Fatalf("engine holds %d distinct filters, want %d", e.Filters(), len(copies))
	}
}

func checkRoute(t *rapid.T, e *Engine, ref map[ifaceID]map[uint64]match.Filter, kinds map[ifaceID]IfaceKind, from ifaceID, ev match.Event) {
	var want []Hit
	for iface := range ifaceID(len(kinds)) {
		if iface == from && kinds[iface] == KindNeighbour {
			continue
		}
		var subs []uint64
		for id, f := range ref[iface] {
			if f.Matches(ev) {
				subs = append(subs, id)
			}
		}
		if len(subs) > 0 {
			slices.Sort(subs)
			want = append(want, Hit{Iface: iface, Subs: subs})
		}
	}
	got := e.Route(from, ev)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("event %v from %d: got %v, want %v", ev, from, got, want)
	}
}
