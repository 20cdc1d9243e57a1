package core

import (
	"github.com/sift-pubsub/sift/internal/wire"
)

// ConnID names a connection attached to the router: a client or a link.
// It is the router's interface id: connections count from 1 and an id is
// never reused.
type ConnID uint64

// Input is one typed input to Core.Step. Each comes from one connection,
// which From names: the driver steps a connection's inputs only while it
// has the connection (a request queued behind its Detach is dropped).
type Input interface {
	input()
	From() ConnID
}

// ClientFrame is a control frame read from a client connection that the
// core handles: AssistOffer, FFClaim and RTOAnswer. The driver steps it
// only for connections it has attached; a frame of another type is an
// error.
type ClientFrame struct {
	Conn ConnID
	Msg  wire.Message
}

// Attach is a client connection the driver accepted (its Attach frame
// read): the engine takes it as an interface. An error (an id attached
// already) changes nothing; the driver closes the connection.
type Attach struct {
	Conn ConnID
}

// Subscribe is a client's Subscribe request. The engine installs the
// subscription (or refuses it: a malformed filter, an id in use, too many
// subscriptions) and, with a mesh, the core places it in the mesh routing
// table: its Bloom dictionary terms first (Bloom mode: they travel ahead
// of the mesh's messages for it), then the placement, through FF when the
// client claimed fixed filters for it, through RTO when the policy is on,
// enough assistants are connected and no other placement is in progress,
// else by the router alone. The subscription's Ack is then a frame in this
// Ready or a later one, when the mesh reports it Ready. Without a mesh
// its answer is a Reply at once, as is every refusal (the mesh refusing
// it: CodeInternal; the core then holds nothing of it, and in Bloom mode
// the terms it flooded are withdrawn in the same Ready).
type Subscribe struct {
	Conn   ConnID
	Sub    uint64
	Filter string
}

// Unsubscribe is a client's Unsubscribe request: the engine and the mesh
// drop the subscription (its placement, if in progress, and its FF claim
// are forgotten) and, in Bloom mode, its terms are withdrawn after the
// mesh's messages. Its answer is a Reply: an Ack, or the refusal of an id
// the client does not hold (which changes nothing).
type Unsubscribe struct {
	Conn ConnID
	Sub  uint64
}

// Detach tells the core a connection went away: the engine drops its
// interface and subscriptions. For a link: its routes, its Bloom terms and filters
// are dropped, and the other links told. For a client: its subscriptions
// and advertisements are dropped from the mesh (terms withdrawn first),
// its claims and its offer forgotten, a placement of its own subscription
// dropped, and a placement waiting for its answers finished by the router
// alone. An unknown connection changes nothing.
type Detach struct {
	Conn ConnID
}

// LinkUp brings up a router link on connection Conn, given the peer's
// hello (read by the driver, which has checked the peer's identity); the
// engine takes Conn as a neighbour interface. The core refuses a peer
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

// From returns the connection the input came from (Input).
func (x ClientFrame) From() ConnID { return x.Conn }

// From returns the connection the input came from (Input).
func (x Attach) From() ConnID { return x.Conn }

// From returns the connection the input came from (Input).
func (x Subscribe) From() ConnID { return x.Conn }

// From returns the connection the input came from (Input).
func (x Unsubscribe) From() ConnID { return x.Conn }

// From returns the connection the input came from (Input).
func (x Detach) From() ConnID { return x.Conn }

// From returns the connection the input came from (Input).
func (x LinkUp) From() ConnID { return x.Conn }

// From returns the connection the input came from (Input).
func (x LinkFrame) From() ConnID { return x.Conn }

func (ClientFrame) input() {}
func (Attach) input()      {}
func (Subscribe) input()   {}
func (Unsubscribe) input() {}
func (Detach) input()      {}
func (LinkUp) input()      {}
func (LinkFrame) input()   {}
