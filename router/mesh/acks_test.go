package mesh

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestUnsubscribeBeforeReady: a subscription removed before its Ready
// never gets one, even when the acknowledgements it waited for arrive
// later, and a new subscription reusing its ref gets exactly its own.
func TestUnsubscribeBeforeReady(t *testing.T) {
	s := newSim(t, []string{"a", "b"}, "poset")
	if err := s.connect(0, 1); err != nil {
		t.Fatal(err)
	}
	s.quiesce()
	k := subKey{0, 7, 1}
	s.subscribe(k, match.MustParse("price > 10"))
	if s.ready[k] {
		t.Fatal("Ready before b acknowledged")
	}
	s.unsubscribe(k) // b has not acknowledged yet
	if got := s.routers[0].pendingCount(); got != 0 {
		t.Fatalf("%d acknowledgements still owed after the unsubscribe", got)
	}
	s.subscribe(k, match.MustParse("price > 20")) // the same ref again
	s.quiesce()                                   // sim.dispatch fails on a Ready for nothing or a second Ready
	if !s.ready[k] {
		t.Fatal("the new subscription never became Ready")
	}
	s.checkQuiet()
}

// TestDropClientForgetsReady: a client that goes away before its
// subscriptions are Ready gets none, and nothing stays owed.
func TestDropClientForgetsReady(t *testing.T) {
	s := newSim(t, []string{"a", "b"}, "forest")
	if err := s.connect(0, 1); err != nil {
		t.Fatal(err)
	}
	s.quiesce()
	for ref := range uint64(3) {
		s.subscribe(subKey{0, 3, ref}, match.MustParse("price > 10"))
	}
	out := s.routers[0].DropClient(3, s.clientSubs(0, 3))
	for ref := range uint64(3) {
		delete(s.subs, subKey{0, 3, ref})
	}
	s.dispatch(0, out)
	s.quiesce()
	if got := s.routers[0].pendingCount(); got != 0 {
		t.Fatalf("%d acknowledgements still owed", got)
	}
	s.checkQuiet()
}
