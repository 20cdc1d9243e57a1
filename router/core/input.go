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

// Subscribe asks the core to install a client subscription, already
// accepted by the router's engine, in the mesh routing table: its Bloom
// dictionary terms first (Bloom mode: they travel ahead of the mesh's
// messages for it), then the placement, through FF when the client
// claimed fixed filters for it, through RTO when the policy is on, enough
// assistants are connected and no other placement is in progress, else
// by the router alone. The subscription's Ack comes in a later Ready (or
// this one) when the mesh reports it Ready. An error means the mesh
// refused it: the core holds nothing of it (in Bloom mode, the terms it
// flooded are withdrawn in the same Ready), and the driver undoes what it
// did for it and refuses it.
type Subscribe struct {
	Conn   ConnID
	Sub    uint64
	Filter match.Filter
}

// Unsubscribe tells the core a client subscription was removed from the
// engine: the mesh drops it (its placement, if in progress, and its FF
// claim are forgotten) and, in Bloom mode, its terms are withdrawn after
// the mesh's messages. A subscription the core does not hold changes
// nothing.
type Unsubscribe struct {
	Conn ConnID
	Sub  uint64
}

// Detach tells the core a connection went away (the driver has dropped it
// from the engine). For a link: its routes, its Bloom terms and filters
// are dropped, and the other links told. For a client: its subscriptions
// and advertisements are dropped from the mesh (terms withdrawn first),
// its claims and its offer forgotten, a placement of its own subscription
// dropped, and a placement waiting for its answers finished by the router
// alone. An unknown connection changes nothing.
type Detach struct {
	Conn ConnID
}

// LinkUp brings up a router link on connection Conn, given the peer's
// hello (read by the driver, which has checked the peer's identity and
// attached Conn in the engine as a neighbour). The core refuses a peer
// whose forwarding mode or Bloom parameters differ from this router's, or
// that the mesh refuses (a stale or duplicate link, a version it cannot
// speak): the error is the refusal to send the peer, and nothing changed.
// Accepted, Ready holds, in this order, this router's hello to the peer
// (if SendHello: the accepting side answers the dialler's hello),
// Bloom's dictionary snapshot, and the mesh's snapshot: the order the
// peer must read them in.
type LinkUp struct {
	Conn      ConnID
	Hello     *wire.LinkHello
	SendHello bool
}

// LinkFrame is a control message read from a link's control stream: a
// routing message for the mesh (routes, acks, barriers, snapshots) or, in
// Bloom mode, a dictionary update, applied and forwarded before anything
// read later. A message the core refuses closes the link: Ready counts the
// error, has the link-down messages to the other links, and Close for the
// link. A frame for a connection that is not a link (it went down while
// the frame was queued) is ignored.
type LinkFrame struct {
	Conn ConnID
	Msg  wire.Message
}

func (ClientFrame) input() {}
func (Subscribe) input()   {}
func (Unsubscribe) input() {}
func (Detach) input()      {}
func (LinkUp) input()      {}
func (LinkFrame) input()   {}
