package core

import (
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// ConnID names a connection attached to the router: a client or a link.
// It is the router's interface id: connections count from 1 and an id is
// never reused.
type ConnID uint64

// Input is one typed input to Core.Step.
type Input interface{ input() }

// ClientFrame is a control frame read from a client connection that the
// core handles: AssistOffer, FFClaim and RTOAnswer. The driver steps it
// only for connections it has attached; a frame of another type is an
// error.
type ClientFrame struct {
	Conn ConnID
	Msg  wire.Message
}

// Place asks the core to place a client subscription, already accepted by
// the router's engine, in the mesh routing table: through FF when the
// client claimed fixed filters for it, through RTO when the policy is on,
// enough assistants are connected and no other placement is in progress,
// else by the router alone. The mesh output (the subscription's Ready, the
// routes to send) comes in Ready.Mesh; an error means the mesh refused the
// subscription (the driver undoes what it did for it).
type Place struct {
	Conn   ConnID
	Sub    uint64
	Filter match.Filter
}

// Unsubscribed tells the core a client subscription was removed (the
// driver has removed it from the engine and the mesh): its claim is
// dropped and its placement, if in progress, forgotten.
type Unsubscribed struct {
	Conn ConnID
	Sub  uint64
}

// Detached tells the core a connection went away: its claims and its
// offer are forgotten, a placement of its own subscription is dropped,
// and a placement waiting for its answers is finished by the router
// alone. The driver steps it before it drops the client from the mesh.
type Detached struct {
	Conn ConnID
}

func (ClientFrame) input()  {}
func (Place) input()        {}
func (Unsubscribed) input() {}
func (Detached) input()     {}
