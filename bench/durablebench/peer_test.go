//go:build !natspeer

package durablebench

import (
	"errors"
	"strings"
	"testing"
)

// TestJetStreamPeerNotBuilt: without the natspeer tag, asking for the
// JetStream peer says how to build it; an unknown peer lists the known
// ones.
func TestJetStreamPeerNotBuilt(t *testing.T) {
	_, err := PeerSystems(PeerJetStream)
	var nb *ErrPeerNotBuilt
	if !errors.As(err, &nb) || !strings.Contains(err.Error(), "go build -tags natspeer") {
		t.Fatalf("got %v", err)
	}
	if _, err := PeerSystems("kafka"); err == nil || !strings.Contains(err.Error(), "jetstream") {
		t.Fatalf("unknown peer: %v", err)
	}
	if s, err := PeerSystems(PeerNone); err != nil || len(s) != 0 {
		t.Fatalf("none: %v %v", s, err)
	}
}
