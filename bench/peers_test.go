package bench

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestPeers: a registered peer gives its systems, "none" gives none, a
// tagged peer this binary lacks says how to build it, and an unknown one
// lists the known names.
func TestPeers(t *testing.T) {
	p := NewPeers[string]("tagged")
	p.Register("plain", func() []string { return []string{"plain", "plain-tls"} })
	if got, err := p.Systems("plain"); err != nil || !slices.Equal(got, []string{"plain", "plain-tls"}) {
		t.Errorf("plain: %v %v", got, err)
	}
	if got, err := p.Systems(PeerNone); err != nil || len(got) != 0 {
		t.Errorf("none: %v %v", got, err)
	}
	var nb *ErrPeerNotBuilt
	if _, err := p.Systems("tagged"); !errors.As(err, &nb) || !strings.Contains(err.Error(), "-tags natspeer") {
		t.Errorf("tagged: %v", err)
	}
	if _, err := p.Systems("kafka"); err == nil || !strings.Contains(err.Error(), "none, plain, tagged") {
		t.Errorf("unknown: %v", err)
	}
	if got := p.Names(); !slices.Equal(got, []string{"plain"}) {
		t.Errorf("names %v", got)
	}
}
