package wire

// Version is the protocol version clients speak, and the oldest a router
// link speaks. Hello carries a range, so later versions can negotiate
// down to it.
const Version uint64 = 1

// ClientVersion is the newest protocol version of client connections: a
// client's Hello offers Version-ClientVersion and the router answers the
// highest both speak.
const ClientVersion = VersionCompact

// VersionLeader is the client version from which a durable refusal may
// carry the not-leader fields (durable.Msg NotLeader and Leader) rather
// than only a reason to read; it changes nothing else, so a router
// speaks version 1 to an older client, without those fields.
const VersionLeader uint64 = 2

// VersionPublishDict is the client version from which a client may send
// its events as PublishDict frames (names through a per-frame dictionary)
// as well as Publish frames. It changes nothing else, so a client of this
// version publishes plain Publish frames to a router of an older one.
const VersionPublishDict uint64 = 3

// LinkVersion is the newest protocol version of router links, which
// announce the range Version-LinkVersion in their LinkHello and use the
// highest version both ends speak (NegotiateLink).
const LinkVersion = VersionBloomWitness

// VersionBloomWitness is the link version from which BloomPublish entries
// may carry a witness (BloomEvent.Witness). It changes nothing else, so a
// router of this version links with one of version 1 and sends it entries
// without witnesses.
const VersionBloomWitness uint64 = 2

// Message is one protocol message.
type Message interface {
	// Type returns the frame type that carries the message.
	Type() Type
	// AppendBody appends the message body (without the frame header).
	AppendBody(b []byte) []byte
}

// Decode decodes the body of a frame of type t. Unknown types are a
// *ProtocolError with CodeUnknownType, malformed bodies CodeMalformed.
// Slices in the result may alias body.
func Decode(t Type, body []byte) (Message, error) {
	var d EventDecoder
	return d.Decode(t, body)
}

// Decode is the package-level Decode using d to decode (and intern the
// attribute names of) events.
func (d *EventDecoder) Decode(t Type, body []byte) (Message, error) {
	r := reader{b: body}
	if d.ShareStrings && (t == TypePublish || t == TypeDeliver || t == TypeLinkPublish) {
		r.shared = string(body)
	}
	var m Message
	switch t {
	case TypeHello:
		m = decodeHello(&r)
	case TypeWelcome:
		m = decodeWelcome(&r)
	case TypeAttach:
		m = decodeAttach(&r)
	case TypeSubscribe:
		m = decodeSubscribe(&r)
	case TypeUnsubscribe:
		m = decodeUnsubscribe(&r)
	case TypePublish:
		m = d.decodePublish(&r)
	case TypeDeliver:
		m = d.decodeDeliver(&r)
	case TypeAck:
		m = decodeAck(&r)
	case TypeError:
		m = decodeError(&r)
	case TypeLinkHello:
		m = decodeLinkHello(&r)
	case TypeReach:
		m = decodeReach(&r)
	case TypeRoutes:
		m = decodeRoutes(&r)
	case TypeRoutesAck:
		m = decodeRoutesAck(&r)
	case TypeBloomTerms:
		m = decodeBloomTerms(&r)
	case TypeBloomPublish:
		m = decodeBloomPublish(&r)
	case TypeDurable:
		m = d.decodeDurable(&r)
	case TypeAssistOffer:
		m = decodeAssistOffer(&r)
	case TypeRTOQuery:
		m = decodeRTOQuery(&r)
	case TypeRTOAnswer:
		m = decodeRTOAnswer(&r)
	case TypeFFFixed:
		m = decodeFFFixed(&r)
	case TypeFFClaim:
		m = decodeFFClaim(&r)
	case TypeHeartbeat:
		m = decodeHeartbeat(&r)
	case TypeAdverts, TypeAdvertise, TypeUnadvertise, TypeAdvertAck:
		m = decodeAdvert(t, &r) // advert.go
	case TypeLinkPublish:
		m = d.decodeLinkPublish(&r) // linkpublish.go
	case TypeSubscribeBatch:
		m = decodeSubscribeBatch(&r) // subbatch.go
	case TypeReplica:
		m = decodeReplica(&r) // replica.go
	case TypePublishDict:
		m = d.decodePublishDict(&r) // publishdict.go
	case TypePlaceClaim:
		m = decodePlaceClaim(&r) // claim.go
	case TypePublishCompact:
		m = d.decodePublishCompact(&r) // publishcompact.go
	default:
		return nil, Errorf(CodeUnknownType, "unknown frame type %d", byte(t))
	}
	if err := r.end(t.String()); err != nil {
		return nil, err
	}
	return m, nil
}
