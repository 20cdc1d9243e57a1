package router

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/bloomfwd"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Forwarding modes, for Config.Forward.
const (
	ForwardExact = "exact"
	ForwardBloom = "bloom"
)

// bloomState is the matching loop's Bloom forwarding state (nil in exact
// mode): the dictionary flood and summaries, the trees over the filters
// each link forwarded, and the local subscriptions whose terms it holds.
// The hooks below are called from the mesh call sites, in the order
// bloomfwd's package doc requires: dictionary messages go out before the
// mesh's messages of the same input.
type bloomState struct {
	params *wire.BloomParams
	dict   *bloomfwd.Dict
	trees  *bloomfwd.Trees
	subs   map[ifaceID]map[uint64]match.Filter
	links  map[mesh.Link]bloomLinkMetrics
	dec    wire.EventDecoder
	to     []mesh.Link // scratch
}

// bloomLinkMetrics are one link's Bloom counters, labelled with its peer.
type bloomLinkMetrics struct {
	exactIn, falseForwards prometheus.Counter
}

// newBloomState returns the state cfg asks for: nil in exact mode.
func newBloomState(cfg Config) (*bloomState, error) {
	if cfg.Forward != ForwardBloom {
		return nil, nil
	}
	bc := cfg.bloomConfig()
	d, err := bloomfwd.NewDict(bc)
	if err != nil {
		return nil, err
	}
	t, err := bloomfwd.NewTrees(bc)
	if err != nil {
		return nil, err
	}
	return &bloomState{
		params: bloomfwd.WireParams(bc.Params), dict: d, trees: t,
		subs:  make(map[ifaceID]map[uint64]match.Filter),
		links: make(map[mesh.Link]bloomLinkMetrics),
	}, nil
}

// bloomConfig is the Bloom part of the configuration.
func (c Config) bloomConfig() bloomfwd.Config {
	return bloomfwd.Config{Params: c.Bloom, Index: c.BloomIndex}
}

// sendAll pushes messages onto the links' control lanes.
func (l *matchLoop) sendAll(sends []mesh.Send) { l.apply(mesh.Output{Sends: sends}) }

// bloomHello sets this router's forwarding parameters in its hello.
func (l *matchLoop) bloomHello(h *wire.LinkHello) {
	if l.bloom != nil {
		h.Bloom = l.bloom.params
	}
}

// bloomCheckHello refuses a peer whose forwarding mode or Bloom parameters
// differ from this router's.
func (l *matchLoop) bloomCheckHello(h *wire.LinkHello) error {
	var own *wire.BloomParams
	if l.bloom != nil {
		own = l.bloom.params
	}
	if err := bloomfwd.CheckHello(own, h.Name, h.Bloom); err != nil {
		return wire.Errorf(wire.CodeUnexpected, "link %s refused: %v", h.Name, err)
	}
	return nil
}

// bloomLinkUp sends a new link to peer the dictionary snapshot (after the
// hello, before the mesh's snapshot) and starts a tree for its filters.
func (l *matchLoop) bloomLinkUp(id mesh.Link, peer string) {
	if l.bloom == nil {
		return
	}
	l.bloom.links[id] = bloomLinkMetrics{
		exactIn:       l.metrics.Bloom.ExactIn.WithLabelValues(peer),
		falseForwards: l.metrics.Bloom.FalseForwards.WithLabelValues(peer),
	}
	l.bloom.trees.LinkUp(id)
	l.sendAll(l.bloom.dict.LinkUp(id))
}

// bloomLinkDown forgets a link's terms and filters.
func (l *matchLoop) bloomLinkDown(id mesh.Link) {
	if l.bloom == nil {
		return
	}
	delete(l.bloom.links, id)
	l.bloom.trees.LinkDown(id)
	l.sendAll(l.bloom.dict.LinkDown(id))
	l.bloomGauges()
}

// bloomSubscribe floods a new local subscription's terms, before the
// mesh sends anything for it.
func (l *matchLoop) bloomSubscribe(id ifaceID, sub uint64, f match.Filter) {
	if l.bloom == nil {
		return
	}
	subs := l.bloom.subs[id]
	if subs == nil {
		subs = make(map[uint64]match.Filter)
		l.bloom.subs[id] = subs
	}
	subs[sub] = f
	l.sendAll(l.bloom.dict.AddFilter(f))
	l.bloomGauges()
}

// bloomUnsubscribe drops a local subscription's terms (a no-op for one
// bloomSubscribe never saw).
func (l *matchLoop) bloomUnsubscribe(id ifaceID, sub uint64) {
	if l.bloom == nil {
		return
	}
	f, ok := l.bloom.subs[id][sub]
	if !ok {
		return
	}
	delete(l.bloom.subs[id], sub)
	if len(l.bloom.subs[id]) == 0 {
		delete(l.bloom.subs, id)
	}
	sends, err := l.bloom.dict.RemoveFilter(f)
	if err != nil {
		panic(fmt.Sprintf("router: bloom dictionary lost subscription %d: %v", sub, err)) // subs mirrors it
	}
	l.sendAll(sends)
	l.bloomGauges()
}

// bloomDropClient drops every subscription of a client that went away.
func (l *matchLoop) bloomDropClient(id ifaceID) {
	if l.bloom == nil {
		return
	}
	for sub := range l.bloom.subs[id] {
		l.bloomUnsubscribe(id, sub)
	}
}

// bloomTerms applies a dictionary update from a link and forwards it on
// the other links at once, before anything received later. A bad update
// closes the link.
func (l *matchLoop) bloomTerms(iface ifaceID, id mesh.Link, m *wire.BloomTerms) {
	if l.bloom == nil {
		l.refuseLink(iface, fmt.Errorf("bloom-terms on a link of a router that forwards exact"))
		return
	}
	sends, err := l.bloom.dict.Receive(id, m)
	if err != nil {
		l.refuseLink(iface, err)
		return
	}
	l.sendAll(sends)
	l.bloomGauges()
}

// bloomRoutes mirrors into the trees a control message the mesh accepted
// from a link.
func (l *matchLoop) bloomRoutes(iface ifaceID, id mesh.Link, m wire.Message) {
	r, ok := m.(*wire.Routes)
	if l.bloom == nil || !ok {
		return
	}
	if err := l.bloom.trees.Routes(id, r); err != nil {
		l.refuseLink(iface, err) // unreachable: the mesh accepted the same message
		return
	}
	l.bloomGauges()
}

// refuseLink closes a link that sent something this router refuses.
func (l *matchLoop) refuseLink(iface ifaceID, err error) {
	c, ok := l.conns[iface]
	if !ok {
		return
	}
	l.metrics.Errors.WithLabelValues(wire.CodeUnexpected.String()).Inc()
	c.fail(wire.CodeUnexpected, err.Error())
	l.detach(iface)
}

func (l *matchLoop) bloomGauges() {
	l.metrics.Bloom.DictionaryTerms.Set(float64(l.bloom.dict.Len()))
	l.metrics.Bloom.TreeFilters.Set(float64(l.bloom.trees.Len()))
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
