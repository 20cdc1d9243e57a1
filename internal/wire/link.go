package wire

import (
	"encoding/binary"
	"slices"
)

// MaxReach bounds the router names in a LinkHello or Reach message.
const MaxReach = 4096

// MaxRoutes bounds the filters in one Routes message.
const MaxRoutes = 1 << 20

// LinkHello opens a router link (docs/protocol.md, "Opening a link"): the sender's
// protocol versions, its router name, and the names of the routers
// reachable through the sender without this link (the sender's own name
// included), sorted, without duplicates. The receiver refuses a link that
// would close a cycle. Bloom is the sender's Bloom forwarding parameters,
// nil when it forwards exactly; linked routers must agree on it.
// Incarnation is a random value the sender chose when it started: a hello
// from a router already linked under the same name but with another
// incarnation means that router restarted and the old link is stale.
// Advertise says the sender runs advertisements (--advertise); linked
// routers must agree on it.
//
// Clock, Epoch and ReachEpochs order links by age, so that of the links
// closing a cycle the newest goes and no older one (docs/protocol.md,
// "Link epochs"). Clock is the sender's link clock (the largest link epoch
// it knows of); Epoch is zero in the dialling router's hello, and in the
// accepting router's answer the epoch it gave the new link, which both
// ends then hold; ReachEpochs, parallel to Reach, holds for each name the
// epoch of the newest link on the sender's path to that router (zero for
// the sender itself). A nil ReachEpochs means zeros.
type LinkHello struct {
	MinVersion, MaxVersion uint64
	Name                   string
	Reach                  []string
	Bloom                  *BloomParams
	Incarnation            uint64
	Advertise              bool
	Clock, Epoch           uint64
	ReachEpochs            []uint64
}

// LinkHello flags, the optional varint after the incarnation.
const (
	linkFlagAdvertise = 1 << iota
	linkFlagEpochs
	linkFlagsKnown = linkFlagAdvertise | linkFlagEpochs
)

// Type returns TypeLinkHello.
func (*LinkHello) Type() Type { return TypeLinkHello }

// AppendBody appends min, max, name, the reachable names, the forwarding
// mode (0: exact; 1: bloom, then m, k, seed, flat, hash family), the
// incarnation (8 bytes, little endian) and, only when some flag is set, a
// varint of flags (bit 0: Advertise; bit 1: epochs follow, set when Clock,
// Epoch or a reach epoch is not zero) and with bit 1 the clock, the epoch
// and one epoch per reachable name (varints). A hello without flags is the
// one routers wrote before flags existed, so old and new routers that do
// not advertise still link; an old router refuses a hello with flags
// (trailing bytes), as it must refuse a router that advertises.
func (m *LinkHello) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.MinVersion)
	b = binary.AppendUvarint(b, m.MaxVersion)
	b = appendString(b, m.Name)
	b = appendNames(b, m.Reach)
	b = appendBloomParams(b, m.Bloom)
	b = binary.LittleEndian.AppendUint64(b, m.Incarnation)
	var flags uint64
	if m.Advertise {
		flags |= linkFlagAdvertise
	}
	epochs := m.Clock != 0 || m.Epoch != 0 || anyNonZero(m.ReachEpochs)
	if epochs {
		flags |= linkFlagEpochs
	}
	if flags != 0 {
		b = binary.AppendUvarint(b, flags)
	}
	if epochs {
		b = binary.AppendUvarint(b, m.Clock)
		b = binary.AppendUvarint(b, m.Epoch)
		b = appendEpochs(b, m.ReachEpochs, len(m.Reach))
	}
	return b
}

func decodeLinkHello(r *reader) *LinkHello {
	m := &LinkHello{MinVersion: r.uvarint("link hello min version"), MaxVersion: r.uvarint("link hello max version")}
	m.Name = r.utf8String("link hello name")
	m.Reach = readNames(r, "link hello reach")
	switch {
	case r.err != nil:
	case m.MinVersion == 0 || m.MinVersion > m.MaxVersion:
		r.fail("link hello: invalid version range %d-%d", m.MinVersion, m.MaxVersion)
	case m.Name == "" || len(m.Name) > MaxNameLen:
		r.fail("link hello: router name of %d bytes (want 1-%d)", len(m.Name), MaxNameLen)
	case !slices.Contains(m.Reach, m.Name):
		r.fail("link hello: reachable set does not name the sender %q", m.Name)
	}
	m.Bloom = readBloomParams(r)
	m.Incarnation = r.fixed64("link hello incarnation")
	if r.err != nil || len(r.b) == 0 {
		return m // no flags: a hello from before they existed
	}
	switch flags := r.uvarint("link hello flags"); {
	case r.err != nil:
	case flags == 0:
		r.fail("link hello: flags present but zero (omitted when none is set)")
	case flags&^linkFlagsKnown != 0:
		r.fail("link hello: unknown flags %#x", flags&^linkFlagsKnown)
	default:
		m.Advertise = flags&linkFlagAdvertise != 0
		if flags&linkFlagEpochs != 0 {
			m.Clock = r.uvarint("link hello clock")
			m.Epoch = r.uvarint("link hello epoch")
			m.ReachEpochs = readEpochs(r, len(m.Reach), "link hello reach epochs")
		}
	}
	return m
}

// Reach replaces the set of router names reachable through the sender
// without this link (the sender's own name included), sorted, without
// duplicates. Routers send it whenever the set changes. Epochs, parallel
// to Names, holds for each name the epoch of the newest link on the
// sender's path to it, as in LinkHello.ReachEpochs (nil: zeros).
type Reach struct {
	Names  []string
	Epochs []uint64
}

// Type returns TypeReach.
func (*Reach) Type() Type { return TypeReach }

// AppendBody appends the names and, only when one is not zero, one epoch
// per name (varints): a Reach without epochs is the one routers wrote
// before epochs existed.
func (m *Reach) AppendBody(b []byte) []byte {
	b = appendNames(b, m.Names)
	if anyNonZero(m.Epochs) {
		b = appendEpochs(b, m.Epochs, len(m.Names))
	}
	return b
}

func decodeReach(r *reader) *Reach {
	m := &Reach{Names: readNames(r, "reach")}
	if r.err == nil && len(m.Names) == 0 {
		r.fail("reach: empty set (it always holds the sender)")
	}
	if r.err == nil && len(r.b) > 0 {
		m.Epochs = readEpochs(r, len(m.Names), "reach epochs")
	}
	return m
}

func anyNonZero(vs []uint64) bool {
	for _, v := range vs {
		if v != 0 {
			return true
		}
	}
	return false
}

// appendEpochs appends n epochs, those of es (zeros past its end, when
// nil): encoders trust callers to pass one per name.
func appendEpochs(b []byte, es []uint64, n int) []byte {
	for i := range n {
		var e uint64
		if i < len(es) {
			e = es[i]
		}
		b = binary.AppendUvarint(b, e)
	}
	return b
}

// readEpochs reads n epochs (one per name just read).
func readEpochs(r *reader, n int, what string) []uint64 {
	out := make([]uint64, n)
	for i := 0; i < n && r.err == nil; i++ {
		out[i] = r.uvarint(what)
	}
	return out
}

// Routes changes the filters the sender forwards to the receiver on a
// link: remove every filter in Remove, then add every filter in Add,
// atomically (a multiset: a filter may be held twice). A Snapshot replaces
// everything the receiver holds from the sender by Add (Remove is then
// empty). Gen numbers the link session and Seq the message within it,
// from 1; the receiver acknowledges with RoutesAck once the change is
// installed everywhere downstream. A Routes that changes nothing is a
// barrier: its acknowledgement says everything sent before it on the link
// is installed downstream.
type Routes struct {
	Gen, Seq uint64
	Snapshot bool
	Remove   []string
	Add      []string
}

// Type returns TypeRoutes.
func (*Routes) Type() Type { return TypeRoutes }

// AppendBody appends gen, seq, the snapshot flag and both filter lists.
func (m *Routes) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.Gen)
	b = binary.AppendUvarint(b, m.Seq)
	b = append(b, boolByte(m.Snapshot))
	b = appendStrings(b, m.Remove)
	return appendStrings(b, m.Add)
}

func decodeRoutes(r *reader) *Routes {
	m := &Routes{Gen: r.uvarint("routes gen"), Seq: r.uvarint("routes seq")}
	switch r.byte("routes snapshot") {
	case 0:
	case 1:
		m.Snapshot = true
	default:
		r.fail("routes: snapshot flag is not 0 or 1")
	}
	m.Remove = readFilters(r, "routes remove")
	m.Add = readFilters(r, "routes add")
	switch {
	case r.err != nil:
	case m.Seq == 0:
		r.fail("routes: seq 0 (sequence numbers start at 1)")
	case m.Snapshot && len(m.Remove) > 0:
		r.fail("routes: a snapshot removes nothing (%d removals)", len(m.Remove))
	}
	return m
}

// RoutesAck acknowledges every Routes message of session Gen up to Seq:
// their changes are installed at the sender and every router beyond it.
type RoutesAck struct {
	Gen, Seq uint64
}

// Type returns TypeRoutesAck.
func (*RoutesAck) Type() Type { return TypeRoutesAck }

// AppendBody appends gen and seq.
func (m *RoutesAck) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.Gen)
	return binary.AppendUvarint(b, m.Seq)
}

func decodeRoutesAck(r *reader) *RoutesAck {
	m := &RoutesAck{Gen: r.uvarint("routes ack gen"), Seq: r.uvarint("routes ack seq")}
	if r.err == nil && m.Seq == 0 {
		r.fail("routes ack: seq 0 (sequence numbers start at 1)")
	}
	return m
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

// appendNames appends router names; encoders trust callers to pass a
// sorted set, decoders check it.
func appendNames(b []byte, names []string) []byte { return appendStrings(b, names) }

// readNames reads a sorted, duplicate-free set of non-empty router names.
func readNames(r *reader, what string) []string {
	n := r.count(what+" count", 2)
	if n > MaxReach {
		r.fail("%s: %d names exceed %d", what, n, MaxReach)
		return nil
	}
	out := make([]string, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		s := r.utf8String(what + " name")
		switch {
		case r.err != nil:
		case s == "" || len(s) > MaxNameLen:
			r.fail("%s: name of %d bytes (want 1-%d)", what, len(s), MaxNameLen)
		case i > 0 && s <= out[i-1]:
			r.fail("%s: names not sorted or duplicated at %q", what, s)
		}
		out = append(out, s)
	}
	return out
}

// readFilters reads a list of filter texts (parsed by the receiver).
func readFilters(r *reader, what string) []string {
	n := r.count(what+" count", 1)
	if n > MaxRoutes {
		r.fail("%s: %d filters exceed %d", what, n, MaxRoutes)
		return nil
	}
	out := make([]string, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		s := r.utf8String(what + " filter")
		if r.err == nil && len(s) > MaxFilterLen {
			r.fail("%s: filter of %d bytes exceeds %d", what, len(s), MaxFilterLen)
		}
		out = append(out, s)
	}
	return out
}
