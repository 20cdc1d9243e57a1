package core

import (
	"fmt"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/mesh"
)

// SubscribeBatch is Subscribe for a batch of client subscriptions, already
// accepted by the router's engine, as one input: ids First, First+1, ...,
// one per filter. The router places them alone (no RTO or FF: a batch is
// for installing many filters fast, and an assisted placement is one
// filter at a time). In Bloom mode the batch's terms go first; the batch's
// one Ack (About TypeSubscribeBatch, ID First) comes when the mesh reports
// the whole batch Ready. An error means the mesh refused the batch: the
// core holds none of it (its terms are withdrawn in the same Ready).
type SubscribeBatch struct {
	Conn    ConnID
	First   uint64
	Filters []match.Filter
}

func (SubscribeBatch) input() {}

func (c *Core) subscribeBatch(in SubscribeBatch) error {
	if c.mesh == nil {
		return fmt.Errorf("router core: subscription batch %d: no mesh", in.First)
	}
	for i, f := range in.Filters {
		c.bloomSubscribe(in.Conn, in.First+uint64(i), f) // terms travel ahead of the mesh's messages
	}
	out, err := c.mesh.SubscribeBatch(mesh.Client(in.Conn), in.First, in.Filters)
	if err != nil {
		for i := range in.Filters {
			c.bloomUnsubscribe(in.Conn, in.First+uint64(i))
		}
		return err
	}
	c.apply(out)
	return nil
}
