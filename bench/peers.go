package bench

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// PeerNone is the --peer value that runs Sift alone.
const PeerNone = "none"

// Peers holds the systems a benchmark command can run beside Sift
// (`--peer NAME`). Peers whose servers are compiled only with a build tag
// register themselves from files carrying that tag, so a binary built
// without it knows their names (Tagged) and says how to get them.
// S is the command's system type. Safe for concurrent use.
type Peers[S any] struct {
	tagged []string
	mu     sync.Mutex
	peers  map[string]func() []S
}

// NewPeers returns a registry that knows the names of the tagged peers.
func NewPeers[S any](tagged ...string) *Peers[S] {
	return &Peers[S]{tagged: tagged, peers: map[string]func() []S{}}
}

// Register makes a peer available under name: systems returns the
// systems it runs (one peer may run several, e.g. with and without TLS).
func (p *Peers[S]) Register(name string, systems func() []S) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.peers[name] = systems
}

// Names lists the registered peers, sorted.
func (p *Peers[S]) Names() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	names := make([]string, 0, len(p.peers))
	for n := range p.peers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Systems returns the systems of peer name (PeerNone or "" gives none);
// a tagged peer this binary lacks is an *ErrPeerNotBuilt.
func (p *Peers[S]) Systems(name string) ([]S, error) {
	if name == "" || name == PeerNone {
		return nil, nil
	}
	p.mu.Lock()
	systems, ok := p.peers[name]
	p.mu.Unlock()
	if ok {
		return systems(), nil
	}
	if slices.Contains(p.tagged, name) {
		return nil, &ErrPeerNotBuilt{Peer: name}
	}
	known := append(append([]string{PeerNone}, p.tagged...), p.Names()...)
	slices.Sort(known)
	return nil, fmt.Errorf("unknown peer %q (known: %s)", name, strings.Join(slices.Compact(known), ", "))
}

// ErrPeerNotBuilt says how to get a peer this binary was built without.
type ErrPeerNotBuilt struct{ Peer string }

func (e *ErrPeerNotBuilt) Error() string {
	return fmt.Sprintf("peer %q is not compiled into this binary: its server is only built on request, "+
		"so the demo and the tests never compile it; build sift with the natspeer tag: "+
		"go build -tags natspeer -o sift ./cmd/sift", e.Peer)
}
