package core

import (
	"errors"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// SubscribeBatch is Subscribe for a client's batch of subscriptions, as
// one input: ids First, First+1, ..., one per filter (parsed by the
// driver, off the matching goroutine). The engine installs all or none;
// with a mesh the router places them alone (no RTO or FF: a batch is for
// installing many filters fast, and an assisted placement is one filter
// at a time) or below the parents the client claimed for them
// (claim.go), Bloom's terms first. The batch's one Ack (About
// TypeSubscribeBatch, ID First) comes when the mesh reports the whole
// batch Ready (at once without a mesh); a refusal is one Reply with the
// error, and the core holds none of the batch (its terms are withdrawn in
// the same Ready).
type SubscribeBatch struct {
	Conn    ConnID
	First   uint64
	Filters []match.Filter
	// Refused, if set, is the driver's refusal of the batch (a filter
	// that did not parse: a *wire.ProtocolError naming it), answered as a
	// Reply in its order among the connection's requests; nothing is
	// installed.
	Refused error
}

func (SubscribeBatch) input() {}

// From returns the connection the input came from (Input).
func (x SubscribeBatch) From() ConnID { return x.Conn }

func (c *Core) subscribeBatch(in SubscribeBatch) {
	if in.Refused != nil {
		c.reply(in.Conn, wire.TypeSubscribeBatch, in.First, in.Refused)
		return
	}
	err := c.eng.SubscribeBatch(in.Conn, in.First, in.Filters)
	if err != nil || c.mesh == nil {
		c.reply(in.Conn, wire.TypeSubscribeBatch, in.First, err)
		return
	}
	c.metric(Subscriptions, uint64(c.eng.Subscriptions()))
	for i, f := range in.Filters {
		c.bloomSubscribe(in.Conn, in.First+uint64(i), f) // terms travel ahead of the mesh's messages
	}
	out, err := c.meshBatch(in) // claim.go
	if err == nil {
		c.apply(out)
		return
	}
	for i := range in.Filters {
		c.bloomUnsubscribe(in.Conn, in.First+uint64(i))
	}
	c.eng.UnsubscribeBatch(in.Conn, in.First, len(in.Filters))
	var pe *wire.ProtocolError
	if !errors.As(err, &pe) {
		err = wire.Errorf(wire.CodeInternal, "mesh refused subscription batch %d: %v", in.First, err)
	}
	c.reply(in.Conn, wire.TypeSubscribeBatch, in.First, err)
}
