package core

import (
	"fmt"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Client connections and their subscriptions: the engine's interfaces and
// subscriptions (engine.go) and, with a mesh, their placement in it
// (links.go, assist.go, bloom.go). A request's answer is a Reply (an Ack,
// or the refusal) unless the mesh places the subscription: then its Ack
// is a frame when the mesh reports it Ready.

// attach takes a client connection as an engine interface (see Attach).
func (c *Core) attach(in Attach) error {
	return c.eng.Attach(in.Conn, KindClient)
}

// subscribe installs a client subscription (see Subscribe).
func (c *Core) subscribe(in Subscribe) {
	err := c.eng.Subscribe(in.Conn, in.Sub, in.Filter)
	if err != nil || c.mesh == nil {
		c.reply(in.Conn, wire.TypeSubscribe, in.Sub, err)
		return
	}
	c.metric(Subscriptions, uint64(c.eng.Subscriptions()))
	f, _ := c.eng.Filter(in.Conn, in.Sub) // the engine's copy, held once for the router
	c.bloomSubscribe(in.Conn, in.Sub, f)  // terms travel ahead of the mesh's messages
	if err = c.place(in.Conn, in.Sub, f); err == nil {
		return
	}
	c.bloomUnsubscribe(in.Conn, in.Sub)
	c.eng.Unsubscribe(in.Conn, in.Sub) // the engine accepted it: cannot fail
	c.reply(in.Conn, wire.TypeSubscribe, in.Sub, wire.Errorf(wire.CodeInternal, "mesh refused subscription %d: %v", in.Sub, err))
}

// unsubscribe removes a client subscription (see Unsubscribe).
func (c *Core) unsubscribe(in Unsubscribe) {
	f, held := c.eng.Filter(in.Conn, in.Sub) // before the engine forgets it
	err := c.eng.Unsubscribe(in.Conn, in.Sub)
	if err == nil && held && c.mesh != nil {
		out, merr := c.mesh.Unsubscribe(mesh.Client(in.Conn), in.Sub, f) // mirrors the engine
		if merr != nil {
			panic(fmt.Sprintf("router core: the mesh does not hold subscription %d of connection %d: %v", in.Sub, in.Conn, merr)) // core invariant
		}
		c.assistUnsubscribed(in.Conn, in.Sub)
		c.apply(out)
		c.bloomUnsubscribe(in.Conn, in.Sub)
	}
	c.reply(in.Conn, wire.TypeUnsubscribe, in.Sub, err)
}

// reply answers a client's request: an Ack (err nil) or its refusal.
func (c *Core) reply(conn ConnID, about wire.Type, ref uint64, err error) {
	if err == nil && about != wire.TypeSubscribeBatch {
		c.metric(Subscriptions, uint64(c.eng.Subscriptions()))
	}
	c.rd.Replies = append(c.rd.Replies, Reply{Conn: conn, About: about, Ref: ref, Err: err})
}
