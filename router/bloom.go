package router

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sift-pubsub/sift/router/bloomfwd"
	"github.com/sift-pubsub/sift/router/core"
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

// bloomLinks are the per-link counters of Bloom forwarding's event path
// (router/core's bloom_publish.go), by link connection; nil: exact.
type bloomLinks map[ifaceID]bloomLinkMetrics

// bloomLinkMetrics are one link's Bloom counters, labelled with its peer.
type bloomLinkMetrics struct {
	exactIn, falseForwards prometheus.Counter
}

// countBloom applies one of the core's Bloom event path metric updates.
func (l *matchLoop) countBloom(m core.Metric) {
	bm := l.metrics.Bloom
	switch m.Kind {
	case core.BloomSummaries:
		bm.Summaries.Add(float64(m.N))
	case core.BloomFill:
		bm.Fill.Observe(m.Value)
	case core.BloomSaturated:
		bm.Saturated.Add(float64(m.N))
	case core.BloomTreeWalks:
		bm.TreeWalks.Add(float64(m.N))
	case core.BloomWitnessDecisions:
		bm.WitnessDecisions.Add(float64(m.N))
	case core.BloomExactIn:
		if lm, ok := l.bloom[m.Conn]; ok {
			lm.exactIn.Add(float64(m.N))
		}
	case core.BloomFalseForwards:
		if lm, ok := l.bloom[m.Conn]; ok {
			lm.falseForwards.Add(float64(m.N))
		}
	}
}
