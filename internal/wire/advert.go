package wire

import "encoding/binary"

// Adverts changes the advertisements the sender forwards to the receiver
// on a router link (routers started with --advertise only): remove every
// filter in Remove, then add every filter in Add, atomically, as sets of
// filter texts. A Snapshot replaces everything the receiver holds from
// the sender by Add (Remove is then empty). Adverts share the link's
// Routes sequence: Gen is the sender's link session, Seq the next number
// after the last Routes or Adverts sent on the link, and RoutesAck
// acknowledges both kinds. The acknowledgement of an Adverts message says
// that every subscription overlapping the new advertisements, from the
// routers beyond the receiver, has been installed at the sender (they
// travel on the same FIFO stream ahead of the acknowledgement).
type Adverts struct {
	Gen, Seq uint64
	Snapshot bool
	Remove   []string
	Add      []string
}

// Type returns TypeAdverts.
func (*Adverts) Type() Type { return TypeAdverts }

// AppendBody appends gen, seq, the snapshot flag and both filter lists,
// laid out as Routes.
func (m *Adverts) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.Gen)
	b = binary.AppendUvarint(b, m.Seq)
	b = append(b, boolByte(m.Snapshot))
	b = appendStrings(b, m.Remove)
	return appendStrings(b, m.Add)
}

func decodeAdverts(r *reader) *Adverts {
	m := &Adverts{Gen: r.uvarint("adverts gen"), Seq: r.uvarint("adverts seq")}
	switch r.byte("adverts snapshot") {
	case 0:
	case 1:
		m.Snapshot = true
	default:
		r.fail("adverts: snapshot flag is not 0 or 1")
	}
	m.Remove = readFilters(r, "adverts remove")
	m.Add = readFilters(r, "adverts add")
	switch {
	case r.err != nil:
	case m.Seq == 0:
		r.fail("adverts: seq 0 (sequence numbers start at 1)")
	case m.Snapshot && len(m.Remove) > 0:
		r.fail("adverts: a snapshot removes nothing (%d removals)", len(m.Remove))
	}
	return m
}

// Advertise is sent by a publishing client to announce that the events it
// will publish match Filter, under an id it chooses (unique per
// connection among its advertisements). The router answers AdvertAck once
// every subscription overlapping Filter has reached it, or Error (About
// TypeAdvertise, Ref ID). A router not started with --advertise refuses
// it.
type Advertise struct {
	ID     uint64
	Filter string
}

// Type returns TypeAdvertise.
func (*Advertise) Type() Type { return TypeAdvertise }

// AppendBody appends id and filter text.
func (m *Advertise) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.ID)
	return appendString(b, m.Filter)
}

func decodeAdvertise(r *reader) *Advertise {
	m := &Advertise{ID: r.uvarint("advertise id"), Filter: r.utf8String("advertise filter")}
	if r.err == nil && len(m.Filter) > MaxFilterLen {
		r.fail("advertise: filter of %d bytes exceeds %d", len(m.Filter), MaxFilterLen)
	}
	return m
}

// Unadvertise withdraws a client's advertisement; the router answers
// AdvertAck (About TypeUnadvertise) or Error.
type Unadvertise struct {
	ID uint64
}

// Type returns TypeUnadvertise.
func (*Unadvertise) Type() Type { return TypeUnadvertise }

// AppendBody appends the id.
func (m *Unadvertise) AppendBody(b []byte) []byte { return binary.AppendUvarint(b, m.ID) }

func decodeUnadvertise(r *reader) *Unadvertise {
	return &Unadvertise{ID: r.uvarint("unadvertise id")}
}

// AdvertAck confirms an Advertise (About TypeAdvertise: the subscriptions
// overlapping it are installed at the router) or an Unadvertise (About
// TypeUnadvertise).
type AdvertAck struct {
	About Type
	ID    uint64
}

// Type returns TypeAdvertAck.
func (*AdvertAck) Type() Type { return TypeAdvertAck }

// AppendBody appends the type acknowledged and the id.
func (m *AdvertAck) AppendBody(b []byte) []byte {
	b = append(b, byte(m.About))
	return binary.AppendUvarint(b, m.ID)
}

func decodeAdvertAck(r *reader) *AdvertAck {
	m := &AdvertAck{About: Type(r.byte("advert ack type")), ID: r.uvarint("advert ack id")}
	if r.err == nil && m.About != TypeAdvertise && m.About != TypeUnadvertise {
		r.fail("advert ack: cannot acknowledge %s", m.About)
	}
	return m
}

// decodeAdvert decodes the body of one of the advertisement messages.
func decodeAdvert(t Type, r *reader) Message {
	switch t {
	case TypeAdverts:
		return decodeAdverts(r)
	case TypeAdvertise:
		return decodeAdvertise(r)
	case TypeUnadvertise:
		return decodeUnadvertise(r)
	default:
		return decodeAdvertAck(r)
	}
}
