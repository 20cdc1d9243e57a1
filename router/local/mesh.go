package local

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
)

// Edge links two routers of a Mesh by index. The router started later
// (the higher index) dials the other.
type Edge struct{ A, B int }

// Mesh is several routers in one process, sharing one deployment CA and
// linked over QUIC on loopback.
type Mesh struct {
	Routers []*Env
	Edges   []Edge
}

// StartMesh writes one CA into dir/certs and starts a router per name
// (data in dir/NAME) in index order, each dialling its neighbours started
// before it. mod, if set, adjusts router i's configuration. It waits until
// every edge is up on both sides, or ctx ends.
func StartMesh(ctx context.Context, dir string, names []string, edges []Edge, mod func(i int, cfg *router.Config)) (*Mesh, error) {
	if err := checkEdges(len(names), edges); err != nil {
		return nil, err
	}
	certDir := filepath.Join(dir, "certs")
	if err := certs.Init(certDir, nil); err != nil {
		return nil, fmt.Errorf("local mesh: %w", err)
	}
	m := &Mesh{Edges: edges}
	for i, name := range names {
		env, err := StartIn(certDir, filepath.Join(dir, name), func(cfg *router.Config) {
			cfg.Name = name
			cfg.MaxLinks = len(edges) + 1
			cfg.Peers = m.peersOf(i)
			if mod != nil {
				mod(i, cfg)
			}
		})
		if err != nil {
			m.Stop()
			return nil, fmt.Errorf("local mesh: router %s: %w", name, err)
		}
		m.Routers = append(m.Routers, env)
	}
	if err := m.WaitLinked(ctx); err != nil {
		m.Stop()
		return nil, err
	}
	return m, nil
}

// checkEdges refuses edges naming a router that does not exist or
// linking a router to itself.
func checkEdges(n int, edges []Edge) error {
	for _, e := range edges {
		if e.A < 0 || e.A >= n || e.B < 0 || e.B >= n || e.A == e.B {
			return fmt.Errorf("local mesh: edge %d-%d does not join two of the %d routers", e.A, e.B, n)
		}
	}
	return nil
}

// peersOf returns the addresses router i dials: its neighbours started
// before it.
func (m *Mesh) peersOf(i int) []string {
	var peers []string
	for _, e := range m.Edges {
		switch {
		case e.A == i && e.B < i:
			peers = append(peers, m.Routers[e.B].Addr)
		case e.B == i && e.A < i:
			peers = append(peers, m.Routers[e.A].Addr)
		}
	}
	return peers
}

// WaitLinked polls every router's links until each has exactly the peers
// its edges name, or ctx ends.
func (m *Mesh) WaitLinked(ctx context.Context) error {
	for {
		missing, err := m.missingLinks(ctx)
		if err != nil {
			return err
		}
		if missing == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("local mesh: links not up: %s: %w", missing, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// missingLinks names the first router whose links differ from its edges.
func (m *Mesh) missingLinks(ctx context.Context) (string, error) {
	for i, env := range m.Routers {
		routes, err := env.Router.Routes(ctx)
		if err != nil {
			return "", fmt.Errorf("local mesh: %w", err)
		}
		var have []string
		for _, l := range routes {
			have = append(have, l.Peer)
		}
		want := m.Neighbours(i)
		slices.Sort(have)
		if !slices.Equal(have, want) {
			return fmt.Sprintf("%s has %v, wants %v", env.Router.Name(), have, want), nil
		}
	}
	return "", nil
}

// Neighbours returns the sorted names of router i's neighbours.
func (m *Mesh) Neighbours(i int) []string {
	var out []string
	for _, e := range m.Edges {
		switch i {
		case e.A:
			out = append(out, m.Routers[e.B].Router.Name())
		case e.B:
			out = append(out, m.Routers[e.A].Router.Name())
		}
	}
	slices.Sort(out)
	return out
}

// Stop stops every router and joins their errors.
func (m *Mesh) Stop() error {
	var errs []error
	for _, env := range m.Routers {
		errs = append(errs, env.Stop())
	}
	return errors.Join(errs...)
}
