package core

import (
	"fmt"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/mesh"
)

// The mesh glue: the router's links and its clients' subscriptions as
// the mesh routing state machine (router/mesh) and Bloom forwarding
// (bloom.go) see them. The core maps each link's connection to its mesh
// link and back, turns mesh outputs into frames (link messages, client
// Acks) and closes, and keeps the order bloomfwd requires: for each
// input, dictionary messages before the mesh's messages.
//
// Local clients are mesh.Client(conn): connection ids count from 1, so
// they fit until 2^32 connections have come and gone.

// links maps the connections of the links that are up to their mesh
// links and back.
type links struct {
	byLink map[mesh.Link]ConnID
	linkOf map[ConnID]mesh.Link
}

// LinkOf returns the mesh link of connection id, if id is a link that is
// up.
func (c *Core) LinkOf(id ConnID) (mesh.Link, bool) {
	l, ok := c.linkOf[id]
	return l, ok
}

// ConnOf returns the connection of a mesh link that is up.
func (c *Core) ConnOf(l mesh.Link) (ConnID, bool) {
	id, ok := c.byLink[l]
	return id, ok
}

// Links returns how many links are up.
func (c *Core) Links() int { return len(c.byLink) }

// Hello returns the hello this router sends on a link it dials (the peer
// is not known yet): the mesh's, with the Bloom parameters in Bloom mode.
func (c *Core) Hello() *wire.LinkHello {
	h := c.mesh.Hello()
	c.bloomHello(h)
	return h
}

// linkUp takes a peer's hello (see LinkUp).
func (c *Core) linkUp(in LinkUp) error {
	if c.mesh == nil {
		return wire.Errorf(wire.CodeUnexpected, "this router takes no router links (its MaxLinks is 0)")
	}
	if _, dup := c.eng.Ifaces[in.Conn]; dup {
		return fmt.Errorf("router core: link up on connection %d, attached already", in.Conn)
	}
	if err := c.bloomCheckHello(in.Hello); err != nil {
		return err
	}
	var hello *wire.LinkHello // the answer, when the peer dialled: it carries the link's epoch
	var id mesh.Link
	var out mesh.Output
	var err error
	if in.SendHello {
		id, hello, out, err = c.mesh.Accept(in.Hello)
	} else {
		id, out, err = c.mesh.LinkUp(in.Hello)
	}
	if err != nil {
		return wire.Errorf(wire.CodeUnexpected, "%v", err)
	}
	if err := c.eng.Attach(in.Conn, KindNeighbour); err != nil {
		panic("router core: " + err.Error()) // not attached: checked above
	}
	if hello != nil {
		c.bloomHello(hello)
	}
	c.byLink[id] = in.Conn
	c.linkOf[in.Conn] = id
	if in.SendHello {
		c.frame(in.Conn, wire.AppendFrame(nil, hello))
	}
	c.bloomLinkUp(id) // the dictionary snapshot precedes the mesh's
	c.apply(out)
	return nil
}

// linkFrame hands a control message received on a link to the mesh; a
// refusal closes the link.
func (c *Core) linkFrame(in LinkFrame) {
	id, ok := c.linkOf[in.Conn]
	if !ok {
		return // detached while the frame was queued
	}
	if bt, ok := in.Msg.(*wire.BloomTerms); ok {
		c.bloomTerms(in.Conn, id, bt) // applied and forwarded before anything later
		return
	}
	out, err := c.mesh.Receive(id, in.Msg)
	if err != nil {
		c.refuseLink(in.Conn, err)
		return
	}
	c.bloomRoutes(in.Conn, id, out.Held)
	c.apply(out)
	c.mirrorRoutes(in.Conn, out.Held)
}

// mirrorRoutes applies to the link table the change a Routes message the
// mesh accepted from a link made (the link is still up), with the filters
// the mesh parsed: the table holds what the mesh holds, and a filter is
// parsed once. Bloom mode keeps the table too, for the events it must
// route exactly (saturated summaries). A change the table refuses (it
// cannot happen: the mesh accepted it) closes the link, which redials and
// resyncs.
func (c *Core) mirrorRoutes(conn ConnID, ch *mesh.HeldChange) {
	if ch == nil {
		return // not Routes
	}
	link, up := c.linkOf[conn]
	if !up {
		return // refused: the link was closed
	}
	if c.lt == nil {
		c.lt = NewLinkTable()
		c.lt.OnFilter = c.noteFilter
	}
	if err := c.lt.ApplyHeld(conn, ch.Add, ch.Remove); err != nil {
		c.rd.Metrics = append(c.rd.Metrics, Metric{Kind: Errors, Code: wire.CodeInternal, N: 1})
		c.closeConn(conn, wire.CodeInternal, err.Error())
		c.dropLink(conn, link)
	}
}

// LinkTable returns the link table (nil until a link sent routes), for
// the driver's event path, which routes events on it until publish
// routing moves into the core. The driver does not change it.
func (c *Core) LinkTable() *LinkTable { return c.lt }

// detach forgets a connection that went away (see Detach).
func (c *Core) detach(in Detach) {
	if link, ok := c.linkOf[in.Conn]; ok {
		c.dropLink(in.Conn, link)
		return
	}
	if st := c.eng.Ifaces[in.Conn]; st != nil && st.Len() > 0 {
		c.metric(Subscriptions, uint64(c.eng.Subscriptions()-st.Len()))
	}
	if c.mesh != nil {
		c.bloomDropClient(in.Conn)
		c.assistDetached(in.Conn)
		// The engine holds the client's filters: the mesh is told them
		// before the engine forgets them.
		c.apply(c.mesh.DropClient(mesh.Client(in.Conn), c.eng.Subs(in.Conn)))
	}
	c.eng.Detach(in.Conn)
}

// dropLink forgets a link that is down or closed: the maps, its engine
// interface, its filters in the link table, its Bloom state, and the
// mesh's routes through it.
func (c *Core) dropLink(conn ConnID, link mesh.Link) {
	delete(c.linkOf, conn)
	delete(c.byLink, link)
	c.eng.Detach(conn)
	if c.lt != nil {
		c.lt.Drop(conn)
	}
	c.bloomLinkDown(link)
	c.apply(c.mesh.LinkDown(link))
}

// refuseLink closes a link that sent something this router refuses,
// counting the error.
func (c *Core) refuseLink(conn ConnID, err error) {
	link, ok := c.linkOf[conn]
	if !ok {
		return
	}
	c.rd.Metrics = append(c.rd.Metrics, Metric{Kind: Errors, Code: wire.CodeUnexpected, N: 1})
	c.closeConn(conn, wire.CodeUnexpected, err.Error())
	c.dropLink(conn, link)
}

// apply turns a mesh output into effects: link messages as frames on the
// links, client Acks for Ready subscriptions (AdvertAcks for Ready
// advertisements), and links to close (dropped here at once, as if they
// went down).
func (c *Core) apply(out mesh.Output) {
	for _, s := range out.Sends {
		if id, ok := c.byLink[s.Link]; ok {
			c.frame(id, wire.AppendFrame(nil, s.Msg))
		}
	}
	for _, r := range out.Ready {
		var ack wire.Message = &wire.Ack{About: wire.TypeSubscribe, ID: r.Ref}
		if r.Advert {
			ack = &wire.AdvertAck{About: wire.TypeAdvertise, ID: r.Ref}
		}
		if r.Batch {
			ack = &wire.Ack{About: wire.TypeSubscribeBatch, ID: r.Ref}
		}
		c.frame(ConnID(r.Client), wire.AppendFrame(nil, ack))
	}
	for _, cl := range out.Close {
		if id, ok := c.byLink[cl.Link]; ok {
			c.closeConn(id, wire.CodeUnexpected, cl.Reason)
			c.dropLink(id, cl.Link)
		}
	}
}
