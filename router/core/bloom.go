package core

import (
	"fmt"
	"maps"
	"slices"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/bloomfwd"
	"github.com/sift-pubsub/sift/router/mesh"
)

// bloomState is the core's Bloom forwarding state (nil in exact mode):
// the dictionary flood and summaries, the trees over the filters each
// link forwarded, and the local subscriptions whose terms it holds.
// The hooks below are called from the mesh call sites (links.go), in the
// order bloomfwd's package doc requires: dictionary messages go out
// before the mesh's messages of the same input.
type bloomState struct {
	params *wire.BloomParams
	dict   *bloomfwd.Dict
	trees  *bloomfwd.Trees
	subs   map[ConnID]map[uint64]match.Filter
	dec    wire.EventDecoder // the event path's (bloom_publish.go)
	to     []mesh.Link       // scratch
}

// newBloomState returns the state cfg asks for: nil in exact mode (cfg
// nil).
func newBloomState(cfg *bloomfwd.Config) (*bloomState, error) {
	if cfg == nil {
		return nil, nil
	}
	d, err := bloomfwd.NewDict(*cfg)
	if err != nil {
		return nil, err
	}
	t, err := bloomfwd.NewTrees(*cfg)
	if err != nil {
		return nil, err
	}
	return &bloomState{
		params: bloomfwd.WireParams(cfg.Params), dict: d, trees: t,
		subs: make(map[ConnID]map[uint64]match.Filter),
	}, nil
}

// BloomDict and BloomTrees return the Bloom forwarding state's dictionary
// and trees (nil in exact mode), for the driver's event path, which reads
// them (summaries, routing on summaries) until publish routing moves into
// the core. The driver does not change them.
func (c *Core) BloomDict() *bloomfwd.Dict {
	if c.bloom == nil {
		return nil
	}
	return c.bloom.dict
}

// BloomTrees: see BloomDict.
func (c *Core) BloomTrees() *bloomfwd.Trees {
	if c.bloom == nil {
		return nil
	}
	return c.bloom.trees
}

// sendAll queues mesh messages as frames on their links.
func (c *Core) sendAll(sends []mesh.Send) { c.apply(mesh.Output{Sends: sends}) }

// bloomHello sets this router's forwarding parameters in its hello.
func (c *Core) bloomHello(h *wire.LinkHello) {
	if c.bloom != nil {
		h.Bloom = c.bloom.params
	}
}

// bloomCheckHello refuses a peer whose forwarding mode or Bloom parameters
// differ from this router's.
func (c *Core) bloomCheckHello(h *wire.LinkHello) error {
	var own *wire.BloomParams
	if c.bloom != nil {
		own = c.bloom.params
	}
	if err := bloomfwd.CheckHello(own, h.Name, h.Bloom); err != nil {
		return wire.Errorf(wire.CodeUnexpected, "link %s refused: %v", h.Name, err)
	}
	return nil
}

// bloomLinkUp sends a new link the dictionary snapshot (after the hello,
// before the mesh's snapshot) and starts a tree for its filters.
func (c *Core) bloomLinkUp(id mesh.Link) {
	if c.bloom == nil {
		return
	}
	c.bloom.trees.LinkUp(id)
	c.sendAll(c.bloom.dict.LinkUp(id))
}

// bloomLinkDown forgets a link's terms and filters.
func (c *Core) bloomLinkDown(id mesh.Link) {
	if c.bloom == nil {
		return
	}
	c.bloom.trees.LinkDown(id)
	c.sendAll(c.bloom.dict.LinkDown(id))
	c.bloomGauges()
}

// bloomSubscribe floods a new local subscription's terms, before the
// mesh sends anything for it.
func (c *Core) bloomSubscribe(id ConnID, sub uint64, f match.Filter) {
	if c.bloom == nil {
		return
	}
	subs := c.bloom.subs[id]
	if subs == nil {
		subs = make(map[uint64]match.Filter)
		c.bloom.subs[id] = subs
	}
	subs[sub] = f
	c.sendAll(c.bloom.dict.AddFilter(f))
	c.bloomGauges()
}

// bloomUnsubscribe drops a local subscription's terms (a no-op for one
// bloomSubscribe never saw).
func (c *Core) bloomUnsubscribe(id ConnID, sub uint64) {
	if c.bloom == nil {
		return
	}
	f, ok := c.bloom.subs[id][sub]
	if !ok {
		return
	}
	delete(c.bloom.subs[id], sub)
	if len(c.bloom.subs[id]) == 0 {
		delete(c.bloom.subs, id)
	}
	sends, err := c.bloom.dict.RemoveFilter(f)
	if err != nil {
		panic(fmt.Sprintf("router core: bloom dictionary lost subscription %d: %v", sub, err)) // subs mirrors it
	}
	c.sendAll(sends)
	c.bloomGauges()
}

// bloomDropClient drops every subscription of a client that went away.
func (c *Core) bloomDropClient(id ConnID) {
	if c.bloom == nil {
		return
	}
	for _, sub := range slices.Sorted(maps.Keys(c.bloom.subs[id])) { // in order: the core is deterministic
		c.bloomUnsubscribe(id, sub)
	}
}

// bloomTerms applies a dictionary update from a link and forwards it on
// the other links at once, before anything received later. A bad update
// closes the link.
func (c *Core) bloomTerms(conn ConnID, id mesh.Link, m *wire.BloomTerms) {
	if c.bloom == nil {
		c.refuseLink(conn, fmt.Errorf("bloom-terms on a link of a router that forwards exact"))
		return
	}
	sends, err := c.bloom.dict.Receive(id, m)
	if err != nil {
		c.refuseLink(conn, err)
		return
	}
	c.sendAll(sends)
	c.bloomGauges()
}

// bloomRoutes mirrors into the trees the change a Routes message the
// mesh accepted from a link made (nil: not Routes), with the filters the
// mesh parsed: a forwarded filter is parsed once.
func (c *Core) bloomRoutes(conn ConnID, id mesh.Link, ch *mesh.HeldChange) {
	if c.bloom == nil || ch == nil {
		return
	}
	if err := c.bloom.trees.ApplyHeld(id, ch.Add, ch.Remove); err != nil {
		c.refuseLink(conn, err) // unreachable: the mesh accepted the same change
		return
	}
	c.bloomGauges()
}

func (c *Core) bloomGauges() {
	c.metric(BloomTerms, uint64(c.bloom.dict.Len()))
	c.metric(BloomFilters, uint64(c.bloom.trees.Len()))
}
