package wire

import (
	"encoding/binary"
	"math/bits"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
)

// Limits of a Durable message's lists.
const (
	// MaxDurableRanges bounds the nack ranges of one message.
	MaxDurableRanges = 1 << 16
	// MaxDurableList bounds the reports, CT entries and filter-set
	// entries of one message.
	MaxDurableList = 1 << 20
)

// Durable carries one message of the durable protocols (package durable):
// between a durable client and its router on the client's control stream,
// and between neighbour routers on a link's control stream. The sender and
// receiver are implicit (the connection's two ends).
//
// Encoding: the kind (one byte), a varint bit mask of the fields present,
// then those fields in mask order. A field is present when it is not zero,
// except that the kinds carrying a filter always carry it (as text) and
// the kinds carrying an event always carry it (in the event encoding).
// Ticks are zig-zag varints; a CT is sorted by pubend without duplicates.
// The not-leader fields (NotLeader, Leader) appear only on a refusal, and
// only toward clients that negotiated VersionLeader: an older decoder
// refuses a field bit it does not know.
type Durable struct {
	Msg durable.Msg
}

// Type returns TypeDurable.
func (*Durable) Type() Type { return TypeDurable }

// Field bits of the mask, in encoding order.
const (
	dfPubend = 1 << iota
	dfTick
	dfPrev
	dfFrom
	dfTo
	dfEvent
	dfRanges
	dfReports
	dfSub
	dfFilter
	dfHasCT
	dfCT
	dfSession
	dfPublisher
	dfSeq
	dfSubs
	dfEpoch
	dfVersion
	dfNonce
	dfFiltered
	dfReason
	dfOrigin
	dfStamps
	dfClaims
	dfPubends
	dfBorn
	dfNotLeader
	dfLeader
	dfRefetch
	dfAll = 1<<iota - 1
)

// maxDurableKind is the highest durable.MsgKind the decoder accepts.
const maxDurableKind = durable.MsgHeartbeat

// carriesFilter reports whether messages of kind k always hold a filter.
func carriesFilter(k durable.MsgKind) bool {
	return k == durable.MsgInstall || k == durable.MsgResume
}

// carriesEvent reports whether messages of kind k always hold an event.
func carriesEvent(k durable.MsgKind) bool {
	return k == durable.MsgData || k == durable.MsgPublish || k == durable.MsgEvent
}

// mask returns the fields of m to encode.
func durableMask(m *durable.Msg) uint64 {
	var f uint64
	set := func(bit uint64, present bool) {
		if present {
			f |= bit
		}
	}
	set(dfPubend, m.Pubend != "")
	set(dfTick, m.Tick != 0)
	set(dfPrev, m.Prev != 0)
	set(dfFrom, m.From != 0)
	set(dfTo, m.To != 0)
	set(dfEvent, carriesEvent(m.Kind))
	set(dfRanges, len(m.Ranges) > 0)
	set(dfReports, len(m.Reports) > 0)
	set(dfSub, m.Sub != "")
	set(dfFilter, carriesFilter(m.Kind))
	set(dfHasCT, m.HasCT)
	set(dfCT, len(m.CT) > 0)
	set(dfSession, m.Session != 0)
	set(dfPublisher, m.Publisher != "")
	set(dfSeq, m.Seq != 0)
	set(dfSubs, len(m.Subs) > 0)
	set(dfEpoch, m.Epoch != 0)
	set(dfVersion, m.Version != 0)
	set(dfNonce, m.Nonce != 0)
	set(dfFiltered, m.Filtered)
	set(dfReason, m.Reason != "")
	set(dfOrigin, m.Origin != "")
	set(dfStamps, len(m.Stamps) > 0)
	set(dfClaims, len(m.Claims) > 0)
	set(dfPubends, len(m.Pubends) > 0)
	set(dfBorn, m.Born != 0)
	set(dfNotLeader, m.NotLeader)
	set(dfLeader, m.Leader != "")
	set(dfRefetch, m.Refetch)
	return f
}

// AppendBody appends the kind, the field mask and the fields present.
func (d *Durable) AppendBody(b []byte) []byte {
	m := &d.Msg
	f := durableMask(m)
	b = append(b, byte(m.Kind))
	b = binary.AppendUvarint(b, f)
	tick := func(bit uint64, t durable.Tick) {
		if f&bit != 0 {
			b = binary.AppendVarint(b, int64(t))
		}
	}
	str := func(bit uint64, s string) {
		if f&bit != 0 {
			b = appendString(b, s)
		}
	}
	num := func(bit uint64, n uint64) {
		if f&bit != 0 {
			b = binary.AppendUvarint(b, n)
		}
	}
	str(dfPubend, m.Pubend)
	tick(dfTick, m.Tick)
	tick(dfPrev, m.Prev)
	tick(dfFrom, m.From)
	tick(dfTo, m.To)
	if f&dfEvent != 0 {
		b = AppendEvent(b, m.Event)
	}
	if f&dfRanges != 0 {
		b = binary.AppendUvarint(b, uint64(len(m.Ranges)))
		for _, r := range m.Ranges {
			b = binary.AppendVarint(b, int64(r.From))
			b = binary.AppendVarint(b, int64(r.To))
		}
	}
	if f&dfReports != 0 {
		b = binary.AppendUvarint(b, uint64(len(m.Reports)))
		for _, r := range m.Reports {
			b = appendString(b, r.SHB)
			b = binary.AppendVarint(b, int64(r.Tr))
			b = binary.AppendVarint(b, int64(r.Td))
		}
	}
	str(dfSub, m.Sub)
	str(dfFilter, m.Filter.String())
	if f&dfCT != 0 {
		b = appendCT(b, m.CT)
	}
	num(dfSession, m.Session)
	str(dfPublisher, m.Publisher)
	num(dfSeq, m.Seq)
	if f&dfSubs != 0 {
		b = binary.AppendUvarint(b, uint64(len(m.Subs)))
		for _, s := range m.Subs {
			b = appendString(b, s.Sub)
			b = appendString(b, s.Filter.String())
		}
	}
	num(dfEpoch, m.Epoch)
	num(dfVersion, m.Version)
	num(dfNonce, m.Nonce)
	str(dfReason, m.Reason)
	str(dfOrigin, m.Origin)
	if f&dfStamps != 0 {
		b = binary.AppendUvarint(b, uint64(len(m.Stamps)))
		for _, st := range m.Stamps {
			b = appendString(b, st.Node)
			b = binary.AppendUvarint(b, st.Epoch)
			b = binary.AppendUvarint(b, st.Version)
		}
	}
	if f&dfClaims != 0 {
		b = binary.AppendUvarint(b, uint64(len(m.Claims)))
		for _, c := range m.Claims {
			b = appendString(b, c.Sub)
			var flags byte
			if c.Holds {
				flags |= 1
			}
			if c.Reply {
				flags |= 2
			}
			b = append(b, flags)
			b = appendCT(b, c.CT)
		}
	}
	if f&dfPubends != 0 {
		b = binary.AppendUvarint(b, uint64(len(m.Pubends)))
		for _, p := range m.Pubends {
			b = appendString(b, p)
		}
	}
	tick(dfBorn, m.Born)
	str(dfLeader, m.Leader)
	return b
}

func appendCT(b []byte, ct durable.CT) []byte {
	ps := ct.Pubends()
	b = binary.AppendUvarint(b, uint64(len(ps)))
	for _, p := range ps {
		b = appendString(b, p)
		b = binary.AppendVarint(b, int64(ct[p]))
	}
	return b
}

// decodeDurable reads a Durable message; see Durable for the checks.
func (d *EventDecoder) decodeDurable(r *reader) *Durable {
	m := durable.Msg{Kind: durable.MsgKind(r.byte("durable kind"))}
	f := r.uvarint("durable fields")
	switch {
	case r.err != nil:
		return nil
	case m.Kind < durable.MsgData || m.Kind > maxDurableKind:
		r.fail("durable: unknown kind %d", byte(m.Kind))
		return nil
	case f&^dfAll != 0:
		r.fail("durable: unknown field bit %d", bits.Len64(f)-1)
		return nil
	case f&dfFilter != 0 != carriesFilter(m.Kind), f&dfEvent != 0 != carriesEvent(m.Kind):
		r.fail("durable %s: filter or event field where the kind has none, or missing", m.Kind)
		return nil
	case f&(dfNotLeader|dfLeader) != 0 && m.Kind != durable.MsgRefused, f&dfLeader != 0 && f&dfNotLeader == 0:
		r.fail("durable %s: a leader field outside a not-leader refusal", m.Kind)
		return nil
	case f&dfRefetch != 0 && m.Kind != durable.MsgNack:
		r.fail("durable %s: a refetch mark outside a nack", m.Kind)
		return nil
	}
	dd := durableDecoder{r: r, f: f}
	m.Pubend = dd.name(dfPubend, "durable pubend")
	m.Tick = dd.tick(dfTick, "durable tick")
	m.Prev = dd.tick(dfPrev, "durable prev")
	m.From = dd.tick(dfFrom, "durable from")
	m.To = dd.tick(dfTo, "durable to")
	if f&dfEvent != 0 {
		m.Event = d.event(r)
	}
	m.Ranges = dd.ranges()
	m.Reports = dd.reports()
	m.Sub = dd.name(dfSub, "durable sub")
	if f&dfFilter != 0 {
		m.Filter = dd.filter("durable filter")
	}
	m.HasCT = f&dfHasCT != 0
	m.CT = dd.ct()
	m.Session = dd.num(dfSession, "durable session")
	m.Publisher = dd.name(dfPublisher, "durable publisher")
	m.Seq = dd.num(dfSeq, "durable seq")
	m.Subs = dd.subs()
	m.Epoch = dd.num(dfEpoch, "durable epoch")
	m.Version = dd.num(dfVersion, "durable version")
	m.Nonce = dd.num(dfNonce, "durable nonce")
	m.Filtered = f&dfFiltered != 0
	if f&dfReason != 0 {
		m.Reason = r.utf8String("durable reason")
		if r.err == nil && len(m.Reason) > MaxErrorLen {
			r.fail("durable: reason of %d bytes exceeds %d", len(m.Reason), MaxErrorLen)
		}
	}
	m.Origin = dd.name(dfOrigin, "durable origin")
	m.Stamps = dd.stamps()
	m.Claims = dd.claims()
	m.Pubends = dd.pubends()
	m.Born = dd.tick(dfBorn, "durable born")
	m.NotLeader = f&dfNotLeader != 0
	m.Leader = dd.name(dfLeader, "durable leader")
	m.Refetch = f&dfRefetch != 0
	if r.err != nil {
		return nil
	}
	return &Durable{Msg: m}
}

// durableDecoder reads the optional fields of a Durable message.
type durableDecoder struct {
	r *reader
	f uint64
}

func (dd durableDecoder) tick(bit uint64, what string) durable.Tick {
	if dd.f&bit == 0 {
		return 0
	}
	return durable.Tick(dd.r.varint(what))
}

func (dd durableDecoder) num(bit uint64, what string) uint64 {
	if dd.f&bit == 0 {
		return 0
	}
	return dd.r.uvarint(what)
}

// name reads a non-empty identifier of at most MaxNameLen bytes.
func (dd durableDecoder) name(bit uint64, what string) string {
	if dd.f&bit == 0 {
		return ""
	}
	return dd.ident(what)
}

func (dd durableDecoder) ident(what string) string {
	s := dd.r.utf8String(what)
	if dd.r.err == nil && (s == "" || len(s) > MaxNameLen) {
		dd.r.fail("%s: %d bytes (want 1-%d)", what, len(s), MaxNameLen)
	}
	return s
}

func (dd durableDecoder) filter(what string) match.Filter {
	text := dd.r.utf8String(what)
	if dd.r.err != nil {
		return match.Filter{}
	}
	if len(text) > MaxFilterLen {
		dd.r.fail("%s: %d bytes exceeds %d", what, len(text), MaxFilterLen)
		return match.Filter{}
	}
	f, err := match.Parse(text)
	if err != nil {
		dd.r.fail("%s: %v", what, err)
	}
	return f
}

func (dd durableDecoder) list(bit uint64, what string, minBytes, limit int) int {
	if dd.f&bit == 0 {
		return 0
	}
	n := dd.r.count(what, minBytes)
	if dd.r.err == nil && (n == 0 || n > limit) {
		dd.r.fail("%s: %d entries (want 1-%d)", what, n, limit)
		return 0
	}
	return n
}

func (dd durableDecoder) ranges() []durable.Range {
	n := dd.list(dfRanges, "durable ranges", 2, MaxDurableRanges)
	if n == 0 {
		return nil
	}
	rs := make([]durable.Range, n)
	for i := range rs {
		rs[i] = durable.Range{From: durable.Tick(dd.r.varint("range from")), To: durable.Tick(dd.r.varint("range to"))}
	}
	return rs
}

func (dd durableDecoder) reports() []durable.Report {
	n := dd.list(dfReports, "durable reports", 4, MaxDurableList)
	if n == 0 {
		return nil
	}
	rs := make([]durable.Report, n)
	for i := range rs {
		rs[i].SHB = dd.ident("report shb")
		rs[i].Tr = durable.Tick(dd.r.varint("report tr"))
		rs[i].Td = durable.Tick(dd.r.varint("report td"))
	}
	return rs
}

func (dd durableDecoder) ct() durable.CT {
	return dd.ctBody(dd.list(dfCT, "durable ct", 3, MaxDurableList))
}

// ctBody reads the n entries of a CT.
func (dd durableDecoder) ctBody(n int) durable.CT {
	if n == 0 {
		return nil
	}
	ct := make(durable.CT, n)
	prev := ""
	for i := range n {
		p := dd.ident("ct pubend")
		t := durable.Tick(dd.r.varint("ct tick"))
		if dd.r.err != nil {
			return nil
		}
		if i > 0 && p <= prev {
			dd.r.fail("ct: pubend %q not in strictly increasing order (after %q)", p, prev)
			return nil
		}
		prev = p
		ct[p] = t
	}
	return ct
}

func (dd durableDecoder) subs() []durable.SubFilter {
	n := dd.list(dfSubs, "durable filter set", 4, MaxDurableList)
	if n == 0 {
		return nil
	}
	subs := make([]durable.SubFilter, n)
	for i := range subs {
		subs[i].Sub = dd.ident("filter set sub")
		subs[i].Filter = dd.filter("filter set filter")
	}
	return subs
}

func (dd durableDecoder) stamps() []durable.Stamp {
	n := dd.list(dfStamps, "durable stamps", 3, MaxDurableList)
	if n == 0 {
		return nil
	}
	sts := make([]durable.Stamp, n)
	for i := range sts {
		sts[i].Node = dd.ident("stamp node")
		sts[i].Epoch = dd.r.uvarint("stamp epoch")
		sts[i].Version = dd.r.uvarint("stamp version")
	}
	return sts
}

func (dd durableDecoder) claims() []durable.Claim {
	n := dd.list(dfClaims, "durable claims", 3, MaxDurableList)
	if n == 0 {
		return nil
	}
	cs := make([]durable.Claim, n)
	for i := range cs {
		cs[i].Sub = dd.ident("claim sub")
		flags := dd.r.byte("claim flags")
		if flags&^3 != 0 {
			dd.r.fail("claim flags %#x: unknown bits", flags)
			return nil
		}
		cs[i].Holds, cs[i].Reply = flags&1 != 0, flags&2 != 0
		cs[i].CT = dd.ctBody(dd.r.count("claim ct", 3))
	}
	return cs
}

func (dd durableDecoder) pubends() []string {
	n := dd.list(dfPubends, "durable pubends", 2, MaxDurableList)
	if n == 0 {
		return nil
	}
	ps := make([]string, n)
	for i := range ps {
		ps[i] = dd.ident("pubend")
	}
	return ps
}
