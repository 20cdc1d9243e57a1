package durable

import (
	"fmt"

	"github.com/sift-pubsub/sift/match"
)

// msgCodecV1 is the version byte of the message encoding.
const msgCodecV1 = 1

// Field bits of the message encoding: a message is a version byte, its kind
// byte, a uvarint of the bits of the fields present (non-zero), then those
// fields in bit order. Bools are present-or-absent bits; a new field takes
// the next bit, so older messages still decode.
const (
	fPubend = 1 << iota
	fTick
	fPrev
	fFrom
	fTo
	fEvent
	fRanges
	fReports
	fSub
	fFilter
	fHasCT
	fCT
	fSession
	fPublisher
	fSeq
	fSubs
	fEpoch
	fVersion
	fNonce
	fFiltered
	fReason
	fOrigin
	fStamps
	fClaims
	fAll = fClaims<<1 - 1
)

// Claim flags.
const (
	claimHolds = 1 << iota
	claimReply
)

// AppendMsg appends the compact, versioned binary encoding of m to b. Zero
// fields take no space. DecodeMsg(AppendMsg(nil, m)) equals m up to empty
// slices and maps decoding as nil.
func AppendMsg(b []byte, m Msg) []byte {
	e := encoder{b: b}
	e.byte1(msgCodecV1)
	e.byte1(byte(m.Kind))
	bits := msgBits(m)
	e.uvarint(bits)
	has := func(f uint64) bool { return bits&f != 0 }
	if has(fPubend) {
		e.str(m.Pubend)
	}
	for _, f := range []struct {
		bit uint64
		t   Tick
	}{{fTick, m.Tick}, {fPrev, m.Prev}, {fFrom, m.From}, {fTo, m.To}} {
		if has(f.bit) {
			e.tick(f.t)
		}
	}
	if has(fEvent) {
		e.appendEventBody(m.Event)
	}
	if has(fRanges) {
		e.uvarint(uint64(len(m.Ranges)))
		for _, r := range m.Ranges {
			e.tick(r.From)
			e.tick(r.To)
		}
	}
	if has(fReports) {
		e.uvarint(uint64(len(m.Reports)))
		for _, r := range m.Reports {
			e.str(r.SHB)
			e.tick(r.Tr)
			e.tick(r.Td)
		}
	}
	if has(fSub) {
		e.str(m.Sub)
	}
	if has(fFilter) {
		e.str(m.Filter.String())
	}
	if has(fCT) {
		e.ct(m.CT)
	}
	e.optUvarint(has(fSession), m.Session)
	if has(fPublisher) {
		e.str(m.Publisher)
	}
	e.optUvarint(has(fSeq), m.Seq)
	if has(fSubs) {
		e.uvarint(uint64(len(m.Subs)))
		for _, s := range m.Subs {
			e.str(s.Sub)
			e.str(s.Filter.String())
		}
	}
	e.optUvarint(has(fEpoch), m.Epoch)
	e.optUvarint(has(fVersion), m.Version)
	e.optUvarint(has(fNonce), m.Nonce)
	if has(fReason) {
		e.str(m.Reason)
	}
	if has(fOrigin) {
		e.str(m.Origin)
	}
	if has(fStamps) {
		e.uvarint(uint64(len(m.Stamps)))
		for _, s := range m.Stamps {
			e.str(s.Node)
			e.uvarint(s.Epoch)
			e.uvarint(s.Version)
		}
	}
	if has(fClaims) {
		e.uvarint(uint64(len(m.Claims)))
		for _, c := range m.Claims {
			e.str(c.Sub)
			e.ct(c.CT)
			var flags uint64
			if c.Holds {
				flags |= claimHolds
			}
			if c.Reply {
				flags |= claimReply
			}
			e.uvarint(flags)
		}
	}
	return e.b
}

// msgBits returns the field bits of the non-zero fields of m.
func msgBits(m Msg) uint64 {
	var bits uint64
	set := func(bit uint64, present bool) {
		if present {
			bits |= bit
		}
	}
	set(fPubend, m.Pubend != "")
	set(fTick, m.Tick != 0)
	set(fPrev, m.Prev != 0)
	set(fFrom, m.From != 0)
	set(fTo, m.To != 0)
	set(fEvent, m.Event.Len() > 0)
	set(fRanges, len(m.Ranges) > 0)
	set(fReports, len(m.Reports) > 0)
	set(fSub, m.Sub != "")
	set(fFilter, m.Filter.Len() > 0)
	set(fHasCT, m.HasCT)
	set(fCT, len(m.CT) > 0)
	set(fSession, m.Session != 0)
	set(fPublisher, m.Publisher != "")
	set(fSeq, m.Seq != 0)
	set(fSubs, len(m.Subs) > 0)
	set(fEpoch, m.Epoch != 0)
	set(fVersion, m.Version != 0)
	set(fNonce, m.Nonce != 0)
	set(fFiltered, m.Filtered)
	set(fReason, m.Reason != "")
	set(fOrigin, m.Origin != "")
	set(fStamps, len(m.Stamps) > 0)
	set(fClaims, len(m.Claims) > 0)
	return bits
}

func (e *encoder) optUvarint(present bool, v uint64) {
	if present {
		e.uvarint(v)
	}
}

// ct encodes a checkpoint token in pubend order.
func (e *encoder) ct(c CT) {
	ps := c.Pubends()
	e.uvarint(uint64(len(ps)))
	for _, p := range ps {
		e.str(p)
		e.tick(c[p])
	}
}

// DecodeMsg decodes what AppendMsg wrote. Truncated or corrupt input, an
// unknown version, kind or field bit, an invalid event or filter, and a
// checkpoint token naming a pubend twice are errors.
func DecodeMsg(b []byte) (Msg, error) {
	d := decoder{b: b}
	m, err := d.msg()
	if err == nil {
		err = d.done()
	}
	if err != nil {
		return Msg{}, fmt.Errorf("decode durable message: %w", err)
	}
	return m, nil
}

func (d *decoder) msg() (Msg, error) {
	if v := d.byte1(); d.err == nil && v != msgCodecV1 {
		return Msg{}, fmt.Errorf("unknown version %d", v)
	}
	m := Msg{Kind: MsgKind(d.byte1())}
	if d.err == nil && (m.Kind == 0 || m.Kind > MsgClaim) {
		return Msg{}, fmt.Errorf("unknown kind %d", m.Kind)
	}
	bits := d.uvarint()
	if bits&^fAll != 0 {
		return Msg{}, fmt.Errorf("unknown field bits %#x", bits&^fAll)
	}
	has := func(f uint64) bool { return bits&f != 0 }
	var err error
	if has(fPubend) {
		m.Pubend = d.str()
	}
	for _, f := range []struct {
		bit uint64
		t   *Tick
	}{{fTick, &m.Tick}, {fPrev, &m.Prev}, {fFrom, &m.From}, {fTo, &m.To}} {
		if has(f.bit) {
			*f.t = d.tick()
		}
	}
	if has(fEvent) {
		if m.Event, err = d.eventBody(); err != nil {
			return Msg{}, fmt.Errorf("event: %w", err)
		}
	}
	if has(fRanges) {
		for range d.count(2) {
			m.Ranges = append(m.Ranges, Range{From: d.tick(), To: d.tick()})
		}
	}
	if has(fReports) {
		for range d.count(3) {
			m.Reports = append(m.Reports, Report{SHB: d.str(), Tr: d.tick(), Td: d.tick()})
		}
	}
	if has(fSub) {
		m.Sub = d.str()
	}
	if has(fFilter) {
		if m.Filter, err = d.filter(); err != nil {
			return Msg{}, err
		}
	}
	m.HasCT = has(fHasCT)
	if has(fCT) {
		if m.CT, err = d.ct(); err != nil {
			return Msg{}, err
		}
	}
	m.Session = d.optUvarint(has(fSession))
	if has(fPublisher) {
		m.Publisher = d.str()
	}
	m.Seq = d.optUvarint(has(fSeq))
	if has(fSubs) {
		for range d.count(2) {
			sf := SubFilter{Sub: d.str()}
			if sf.Filter, err = d.filter(); err != nil {
				return Msg{}, err
			}
			m.Subs = append(m.Subs, sf)
		}
	}
	m.Epoch = d.optUvarint(has(fEpoch))
	m.Version = d.optUvarint(has(fVersion))
	m.Nonce = d.optUvarint(has(fNonce))
	m.Filtered = has(fFiltered)
	if has(fReason) {
		m.Reason = d.str()
	}
	if has(fOrigin) {
		m.Origin = d.str()
	}
	if has(fStamps) {
		for range d.count(3) {
			m.Stamps = append(m.Stamps, Stamp{Node: d.str(), Epoch: d.uvarint(), Version: d.uvarint()})
		}
	}
	if has(fClaims) {
		for range d.count(2) {
			c := Claim{Sub: d.str()}
			if c.CT, err = d.ct(); err != nil {
				return Msg{}, err
			}
			flags := d.uvarint()
			if flags&^(claimHolds|claimReply) != 0 {
				return Msg{}, fmt.Errorf("claim %q: unknown flags %#x", c.Sub, flags)
			}
			c.Holds, c.Reply = flags&claimHolds != 0, flags&claimReply != 0
			m.Claims = append(m.Claims, c)
		}
	}
	return m, d.err
}

func (d *decoder) optUvarint(present bool) uint64 {
	if !present {
		return 0
	}
	return d.uvarint()
}

func (d *decoder) filter() (match.Filter, error) {
	text := d.str()
	if d.err != nil {
		return match.Filter{}, d.err
	}
	f, err := match.Parse(text)
	if err != nil {
		return match.Filter{}, fmt.Errorf("filter: %w", err)
	}
	return f, nil
}

func (d *decoder) ct() (CT, error) {
	n := d.count(2)
	c := make(CT, n)
	for range n {
		p := d.str()
		if _, dup := c[p]; dup && d.err == nil {
			return nil, fmt.Errorf("checkpoint token names pubend %q twice", p)
		}
		c[p] = d.tick()
	}
	return c, d.err
}
