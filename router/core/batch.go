package core

import (
	"fmt"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/mesh"
)

// PlaceBatch asks the core to place a batch of client subscriptions,
// already accepted by the router's engine, in the mesh routing table as one
// input: ids First, First+1, ..., one per filter. The router places them
// alone (no RTO or FF: a batch is for installing many filters fast, and an
// assisted placement is one filter at a time). The mesh output, with one
// Ready for the whole batch (Batch set, Ref First), comes in Ready.Mesh;
// an error means the mesh refused the batch and holds none of it.
type PlaceBatch struct {
	Conn    ConnID
	First   uint64
	Filters []match.Filter
}

func (PlaceBatch) input() {}

func (c *Core) placeBatch(in PlaceBatch) error {
	if c.mesh == nil {
		return fmt.Errorf("router core: place batch from %d: no mesh", in.First)
	}
	out, err := c.mesh.SubscribeBatch(mesh.Client(in.Conn), in.First, in.Filters)
	if err != nil {
		return err
	}
	c.meshOut(out)
	return nil
}
