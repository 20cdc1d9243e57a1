package router

import (
	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
)

// The router's hooks into its durable side; each is a no-op when durable
// delivery is off (Config.Durable nil).

// startDurable runs the durable driver until the returned stop function
// is called; stop waits for the driver and closes the store.
func (r *Router) startDurable() (stop func()) {
	if r.durable == nil {
		return func() {}
	}
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		r.durable.run(quit)
		close(done)
	}()
	r.log.Info("durable delivery on", "pubends", r.durable.cfg.local(r.cfg.Name), "members", r.durable.cfg.Members)
	return func() {
		close(quit)
		<-done
		if err := r.durable.store.Close(); err != nil {
			r.log.Warn("durable store close", "err", err)
		}
	}
}

// durableFromClient hands a client's durable frame to the driver; false
// means the router stopped taking input. Without durable delivery the
// frame is a protocol error.
func (r *Router) durableFromClient(c *conn, m *wire.Durable) error {
	if r.durable == nil {
		return wire.Errorf(wire.CodeUnexpected, "durable delivery is off on router %s", r.cfg.Name)
	}
	if !r.durable.fromClient(c, m.Msg, r.stopInput) {
		return errStopped
	}
	return nil
}

// durableDetach tells the durable side a client connection closed.
func (r *Router) durableDetach(id ifaceID) {
	if r.durable != nil {
		r.durable.clientDetached(id, r.stopInput)
	}
}

// durableLinkUp and durableLinkDown track the router links for durable
// messages.
func (r *Router) durableLinkUp(peer string, c *conn, reach []string) {
	if r.durable != nil {
		r.durable.linkUp(peer, c, reach)
	}
}

func (r *Router) durableLinkDown(peer string, c *conn) {
	if r.durable != nil {
		r.durable.linkDown(peer, c)
	}
}

// durableLinkFrame looks at a frame read on a link's control stream: a
// durable frame is handed to the driver (handled is true), a Reach update
// is noted and still goes to the mesh. ok is false once the router stopped
// taking input.
func (r *Router) durableLinkFrame(peer string, c *conn, m wire.Message) (handled, ok bool) {
	switch m := m.(type) {
	case *wire.Durable:
		if r.durable == nil {
			return true, true // a neighbour with durable delivery on: nothing to do here
		}
		return true, r.durable.fromLink(peer, m.Msg, r.stopInput)
	case *wire.Reach:
		if r.durable != nil {
			r.durable.linkReach(peer, c, m.Names)
		}
	case *wire.Replica:
		if r.durable == nil {
			return true, true
		}
		if m.To != r.cfg.Name && r.durable.relayReplica(peer, m) {
			return true, true
		}
		return true, r.durable.inputReplica(durableInput{env: durable.Envelope{From: peer}, replica: m}, r.stopInput)
	}
	return false, true
}
