package scribe

// Kind says what a [Message] is for.
type Kind uint8

// Message kinds. Routed kinds travel hop by hop through Pastry toward Key;
// the others go directly to one node.
const (
	// KindPastryJoin (routed to the joiner's id) asks each node on the route
	// for routing state; Origin is the joining node.
	KindPastryJoin Kind = iota + 1
	// KindJoinState carries routing state (Refs) to a joining node; Final is
	// set by the numerically closest node, which includes its leaf set.
	KindJoinState
	// KindAnnounce tells a node that From has joined the overlay.
	KindAnnounce
	// KindLeafRequest asks for the receiver's leaf set (leaf set repair).
	KindLeafRequest
	// KindRowRequest asks for row Row of the receiver's routing table.
	KindRowRequest
	// KindStateReply answers a leaf request (Row -1) or a row request (Row)
	// with Refs.
	KindStateReply
	// KindUndeliverable returns Bounced to its sender: the destination is dead.
	KindUndeliverable

	// KindCreate (routed to the group id) creates a group at its root.
	KindCreate
	// KindJoin (routed to the group id) asks the receiver to adopt From as a
	// child for group Key.
	KindJoin
	// KindJoinDirect asks the receiver to adopt From as a child for group
	// Key; sent to a sibling after a bottleneck redirect.
	KindJoinDirect
	// KindLeave tells a parent that From no longer needs group Key.
	KindLeave
	// KindPublish (routed to the group id, or sent directly to a cached root)
	// carries a message from source Origin to the root of group Key.
	KindPublish
	// KindRootAddr tells a source the root of group Key (From).
	KindRootAddr
	// KindMulticast carries message Seq of group Key down the tree; Path is
	// the sender's path from the root.
	KindMulticast
	// KindHeartbeat tells children their parent is alive; Path as above.
	KindHeartbeat
	// KindReplica gives the receiver a copy of group Key's root state.
	KindReplica
	// KindRedirect tells a child that its parent dropped it (bottleneck
	// remover); Refs are its former siblings and Costs the parent's distance
	// to each.
	KindRedirect
	// KindCollapse asks a parent to replace From by Refs[0] among its
	// children for group Key (From is a single-child non-member forwarder
	// leaving the tree).
	KindCollapse
	// KindNewParent tells a child that Refs[0] is now its parent for Key.
	KindNewParent
)

var kindNames = [...]string{
	KindPastryJoin: "pastry-join", KindJoinState: "join-state", KindAnnounce: "announce",
	KindLeafRequest: "leaf-request", KindRowRequest: "row-request", KindStateReply: "state-reply",
	KindUndeliverable: "undeliverable", KindCreate: "create", KindJoin: "join",
	KindJoinDirect: "join-direct", KindLeave: "leave", KindPublish: "publish",
	KindRootAddr: "root-addr", KindMulticast: "multicast", KindHeartbeat: "heartbeat",
	KindReplica: "replica", KindRedirect: "redirect", KindCollapse: "collapse",
	KindNewParent: "new-parent",
}

// NumKinds bounds the Kind values, for per-kind counters.
const NumKinds = int(KindNewParent) + 1

// String returns the kind's name, as used in reports and test failures.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind?"
}

// Routed reports whether messages of this kind travel through Pastry routing.
func (k Kind) Routed() bool {
	return k == KindPastryJoin || k == KindCreate || k == KindJoin || k == KindPublish
}

// Message is every message nodes exchange. Fields beyond Kind, From and Key
// are used only by the kinds that document them; slices are owned by the
// message once sent and never modified afterwards.
type Message struct {
	Kind Kind
	// Final marks the last KindJoinState of a Pastry join.
	Final bool
	// Hops counts the Pastry hops a routed message has taken.
	Hops uint8
	// Row is the routing table row asked for by KindRowRequest.
	Row int8
	// From is the node that sent this hop.
	From Ref
	// Origin is the node that first sent a routed or published message.
	Origin Ref
	// Key is the routing key (a node id or a group id).
	Key ID
	// Seq numbers multicast messages per group, from 1 at the root.
	Seq uint64
	// Path is the sender's path from the root, root first.
	Path []Addr
	// Refs carries node references (routing state, siblings, replacements).
	Refs []Ref
	// Costs carries one distance per entry of Refs.
	Costs []int64
	// Bounced is the message that could not be delivered.
	Bounced *Message
}

// Envelope is a message and its destination.
type Envelope struct {
	To  Addr
	Msg Message
}

// Delivery reports that a member received multicast message Seq of Group.
type Delivery struct {
	Group ID
	Seq   uint64
}

// Outbox collects a node's effects. The caller sends every envelope in
// order and hands every delivery to the application; it may reuse the outbox
// after calling Reset.
type Outbox struct {
	Msgs       []Envelope
	Deliveries []Delivery
}

// Reset empties the outbox, keeping its storage.
func (o *Outbox) Reset() {
	clear(o.Msgs)
	o.Msgs = o.Msgs[:0]
	o.Deliveries = o.Deliveries[:0]
}

func (o *Outbox) send(to Addr, m Message) { o.Msgs = append(o.Msgs, Envelope{To: to, Msg: m}) }
