//go:build !natspeer

package netbench

import (
	"errors"
	"strings"
	"testing"
)

// TestNATSPeerNotBuilt: without the natspeer tag, asking for the NATS
// peer says how to build it; an unknown peer lists the known ones.
func TestNATSPeerNotBuilt(t *testing.T) {
	_, err := PeerSystems(PeerNATS)
	var nb *ErrPeerNotBuilt
	if !errors.As(err, &nb) || !strings.Contains(err.Error(), "go build -tags natspeer") {
		t.Fatalf("got %v", err)
	}
	if _, err := PeerSystems("kafka"); err == nil || !strings.Contains(err.Error(), "nats") {
		t.Fatalf("unknown peer: %v", err)
	}
	if s, err := PeerSystems(PeerNone); err != nil || len(s) != 0 {
		t.Fatalf("none: %v %v", s, err)
	}
}
