package router

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/bloomfwd"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Forwarding modes, for Config.Forward.
const (
	ForwardExact = "exact"
	ForwardBloom = "bloom"
)

// bloomConfig is the Bloom part of the configuration.
func (c Config) bloomConfig() bloomfwd.Config {
	return bloomfwd.Config{Params: c.Bloom, Index: c.BloomIndex}
}

// checkForward validates and defaults the forwarding fields of c.
func (c *Config) checkForward() error {
	switch c.Forward {
	case "":
		c.Forward = ForwardExact
	case ForwardExact, ForwardBloom:
	default:
		return fmt.Errorf("router config: Forward %q (want %s or %s)", c.Forward, ForwardExact, ForwardBloom)
	}
	if c.Forward != ForwardBloom {
		return nil
	}
	if err := c.bloomConfig().Validate(); err != nil {
		return fmt.Errorf("router config: %w", err)
	}
	return nil
}

// bloomPath is what Bloom forwarding's event path (forward.go) reads:
// the core's dictionary and trees (until publish routing moves into the
// core), per-link counters, and scratch space.
type bloomPath struct {
	dict  *bloomfwd.Dict
	trees *bloomfwd.Trees
	links map[ifaceID]bloomLinkMetrics
	dec   wire.EventDecoder
	to    []mesh.Link // scratch
}

// bloomLinkMetrics are one link's Bloom counters, labelled with its peer.
type bloomLinkMetrics struct {
	exactIn, falseForwards prometheus.Counter
}
