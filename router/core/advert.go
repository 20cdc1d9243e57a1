package core

import (
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Advertise is a client's Advertise request: the filter of the events it
// will publish. In advertise mode the core parses the filter and installs
// the advertisement in the mesh, which floods it; its AdvertAck is a
// frame when the mesh reports it Ready. Without advertisements (no mesh,
// or the mesh does not advertise) it is acknowledged at once: every
// subscription already reaches every router. A filter that does not
// parse (CodeBadFilter) or an id the client already advertised
// (CodeDuplicateSubscription) is refused with a Reply and changes
// nothing. A request from a connection not attached (it went away while
// the request was queued) is ignored.
type Advertise struct {
	Conn   ConnID
	ID     uint64
	Filter string
}

// Unadvertise is a client's Unadvertise request: the mesh drops the
// advertisement (advertise mode) and the AdvertAck follows the mesh's
// messages for it; without advertisements it is acknowledged at once. An
// id the client does not advertise is refused with a Reply
// (CodeUnknownSubscription) and changes nothing.
type Unadvertise struct {
	Conn ConnID
	ID   uint64
}

func (Advertise) input()   {}
func (Unadvertise) input() {}

// From returns the connection the input came from (Input).
func (x Advertise) From() ConnID { return x.Conn }

// From returns the connection the input came from (Input).
func (x Unadvertise) From() ConnID { return x.Conn }

// advertising reports whether the router runs advertisements.
func (c *Core) advertising() bool { return c.mesh != nil && c.mesh.Advertising() }

func (c *Core) advertise(in Advertise) {
	if _, ok := c.eng.Ifaces[in.Conn]; !ok {
		return
	}
	f, err := match.Parse(in.Filter)
	switch {
	case err != nil:
		c.reply(in.Conn, wire.TypeAdvertise, in.ID, wire.Errorf(wire.CodeBadFilter, "advertisement %d: %v", in.ID, err))
	case !c.advertising():
		c.advertAck(in.Conn, wire.TypeAdvertise, in.ID)
	default:
		out, err := c.mesh.Advertise(mesh.Client(in.Conn), in.ID, f)
		if err != nil {
			c.reply(in.Conn, wire.TypeAdvertise, in.ID, wire.Errorf(wire.CodeDuplicateSubscription, "%v", err))
			return
		}
		c.apply(out) // its Ready becomes the AdvertAck
	}
}

func (c *Core) unadvertise(in Unadvertise) {
	if _, ok := c.eng.Ifaces[in.Conn]; !ok {
		return
	}
	if c.advertising() {
		out, err := c.mesh.Unadvertise(mesh.Client(in.Conn), in.ID)
		if err != nil {
			c.reply(in.Conn, wire.TypeUnadvertise, in.ID, wire.Errorf(wire.CodeUnknownSubscription, "%v", err))
			return
		}
		c.apply(out)
	}
	c.advertAck(in.Conn, wire.TypeUnadvertise, in.ID)
}

func (c *Core) advertAck(conn ConnID, about wire.Type, id uint64) {
	c.frame(conn, wire.AppendFrame(nil, &wire.AdvertAck{About: about, ID: id}))
}
