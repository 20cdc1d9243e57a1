package router

import (
	"fmt"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
	"github.com/sift-pubsub/sift/router/core"
)

// AssistConfig configures client-assisted placement of subscriptions in
// the mesh routing table (docs/protocol.md, "Client-assisted
// placement"). Assistance needs the mesh (Config.MaxLinks > 0); without it the
// router keeps no routing table and ignores offers. The zero value is off.
type AssistConfig struct {
	// RTO is the routing-table offloading policy: "off" (default: the
	// router places every filter itself), "trust" (one assisting client's
	// answers are used as they are: a lying client can make events be
	// missed), "majority" (Clients clients per vector, the bitwise majority
	// kept, verified when they disagree) or "verify" (one client; the
	// router checks the claimed position with covering tests and places
	// the filter itself when the check fails).
	RTO string
	// Clients is how many assisting clients answer each vector under
	// majority (default 3). With fewer clients connected, a subscription
	// is placed by the router alone.
	Clients int
	// VectorSize is the number of filters per RTO vector (default 64).
	VectorSize int
	// Timeout bounds the wait for an answer (default 2s); after it the
	// router places the filter itself.
	Timeout time.Duration
	// Fixed are the fixed filters of FF, in filter syntax; empty: FF off.
	// Assisting clients receive them and claim, before each subscription,
	// which cover its filter; the router starts the insertion below them.
	// Only the subscriber claims, so claims are verified unless RTO is
	// trust.
	Fixed []string
}

// resolve checks the configuration and fills in defaults.
func (a AssistConfig) resolve() (core.AssistSettings, error) {
	var s core.AssistSettings
	if a.Clients < 0 || a.VectorSize < 0 || a.Timeout < 0 {
		return s, fmt.Errorf("router config: assist: negative clients, vector size or timeout")
	}
	s.FF = poset.Verify
	switch a.RTO {
	case "", "off":
	default:
		p, err := poset.ParsePolicy(a.RTO)
		if err != nil {
			return s, fmt.Errorf("router config: rto: %w (or off)", err)
		}
		s.On = true
		if p == poset.Trust { // one claim per subscription: a majority of one is trust
			s.FF = p
		}
		s.RTO = poset.RTOConfig{Policy: p, VectorSize: a.VectorSize, Clients: a.Clients}
		if s.RTO.VectorSize == 0 {
			s.RTO.VectorSize = 64
		}
		if s.RTO.VectorSize > 1<<16 {
			return s, fmt.Errorf("router config: rto vector size %d exceeds %d", s.RTO.VectorSize, 1<<16)
		}
		if p != poset.Majority {
			s.RTO.Clients = 1
		} else if s.RTO.Clients == 0 {
			s.RTO.Clients = 3
		}
	}
	for i, text := range a.Fixed {
		f, err := match.Parse(text)
		if err != nil {
			return s, fmt.Errorf("router config: fixed filter %d %q: %w", i+1, text, err)
		}
		if !match.Satisfiable(f) {
			return s, fmt.Errorf("router config: fixed filter %d %q matches nothing", i+1, text)
		}
		s.Fixed = append(s.Fixed, f)
	}
	s.Timeout = a.Timeout
	if s.Timeout == 0 {
		s.Timeout = 2 * time.Second
	}
	return s, nil
}
