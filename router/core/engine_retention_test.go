package core

import (
	"runtime"
	"testing"
	"weak"

	"github.com/sift-pubsub/sift/match"
)

// TestRouteForgetsDetachedInterfaces: once an interface is detached, the
// engine keeps nothing of it, even when an earlier event reached more
// interfaces than the events routed since (route's scratch space must
// not keep a detached interface's state, and its filters, alive).
func TestRouteForgetsDetachedInterfaces(t *testing.T) {
	e := NewEngine(match.NewScan(), 0)
	const n = 20 // past the insertion sort's 16, to run both sorts
	for i := range n {
		if err := e.Attach(ifaceID(i), KindClient); err != nil {
			t.Fatal(err)
		}
		if err := e.Subscribe(ifaceID(i), 1, `a exists`); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Subscribe(0, 2, `b exists`); err != nil {
		t.Fatal(err)
	}
	if hits := e.Route(99, match.MustEvent(match.Attr{Name: "a", Value: match.Int(1)})); len(hits) != n {
		t.Fatalf("an event for every interface reached %d of %d", len(hits), n)
	}
	gone := make([]weak.Pointer[ifaceState], 0, n-1)
	for i := 1; i < n; i++ {
		gone = append(gone, weak.Make(e.Ifaces[ifaceID(i)]))
		e.Detach(ifaceID(i))
	}
	if hits := e.Route(99, match.MustEvent(match.Attr{Name: "b", Value: match.Int(1)})); len(hits) != 1 {
		t.Fatalf("an event for interface 0 reached %d interfaces", len(hits))
	}
	runtime.GC()
	runtime.GC()
	kept := 0
	for _, w := range gone {
		if w.Value() != nil {
			kept++
		}
	}
	runtime.KeepAlive(e)
	if kept > 0 {
		t.Fatalf("%d of %d detached interfaces' states still reachable through the engine", kept, len(gone))
	}
}
