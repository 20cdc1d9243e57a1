package core

import (
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Advertise installs a client's advertisement in the mesh (advertise
// mode: the driver steps it only when the mesh advertises, after parsing
// the filter). Its AdvertAck comes when the mesh reports it Ready; an
// error (an id the client already advertised) changes nothing, and the
// driver refuses it.
type Advertise struct {
	Conn   ConnID
	ID     uint64
	Filter match.Filter
}

// Unadvertise removes a client's advertisement from the mesh (advertise
// mode); the driver acknowledges it after the Ready. An error (an id the
// client does not advertise) changes nothing.
type Unadvertise struct {
	Conn ConnID
	ID   uint64
}

func (Advertise) input()   {}
func (Unadvertise) input() {}

func (c *Core) advertise(in Advertise) error {
	if c.mesh == nil {
		return errNoMesh
	}
	out, err := c.mesh.Advertise(mesh.Client(in.Conn), in.ID, in.Filter)
	if err != nil {
		return err
	}
	c.apply(out)
	return nil
}

func (c *Core) unadvertise(in Unadvertise) error {
	if c.mesh == nil {
		return errNoMesh
	}
	out, err := c.mesh.Unadvertise(mesh.Client(in.Conn), in.ID)
	if err != nil {
		return err
	}
	c.apply(out)
	return nil
}
