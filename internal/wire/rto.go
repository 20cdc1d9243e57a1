package wire

import "encoding/binary"

// Assist modes a client offers in AssistOffer.
const (
	AssistRTO uint8 = 1 << iota // answers RTOQuery with RTOAnswer
	AssistFF                    // sends FFClaim before its subscriptions
	assistAll = AssistRTO | AssistFF
)

// MaxVector bounds the filters of one RTOQuery (and so the bits of an
// RTOAnswer) and the fixed filters of FFFixed.
const MaxVector = 1 << 16

// AssistOffer is sent by a client, on its control stream, to offer its CPU
// for placing subscriptions in its router's routing table
// (docs/protocol.md, "Client-assisted placement"): Modes is a set of AssistRTO and AssistFF. A router
// that does not use assistance ignores it; one that does sends RTOQuery
// (RTO) and, once, FFFixed (FF).
type AssistOffer struct {
	Modes uint8
}

// Type returns TypeAssistOffer.
func (*AssistOffer) Type() Type { return TypeAssistOffer }

// AppendBody appends the modes byte.
func (m *AssistOffer) AppendBody(b []byte) []byte { return append(b, m.Modes) }

func decodeAssistOffer(r *reader) *AssistOffer {
	m := &AssistOffer{Modes: r.byte("assist offer modes")}
	if r.err == nil && (m.Modes == 0 || m.Modes&^assistAll != 0) {
		r.fail("assist offer: modes %#x (want a non-empty set of %#x)", m.Modes, assistAll)
	}
	return m
}

// RTOQuery asks an assisting client which filters of a vector (a slice of
// one layer of the router's routing table) cover Filter, are covered by
// it, and overlap it. Q identifies the query on the connection; the client
// answers with an RTOAnswer carrying the same Q.
type RTOQuery struct {
	Q       uint64
	Filter  string
	Filters []string
}

// Type returns TypeRTOQuery.
func (*RTOQuery) Type() Type { return TypeRTOQuery }

// AppendBody appends q, the filter and the vector.
func (m *RTOQuery) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.Q)
	b = appendString(b, m.Filter)
	return appendStrings(b, m.Filters)
}

func decodeRTOQuery(r *reader) *RTOQuery {
	m := &RTOQuery{Q: r.uvarint("rto query id")}
	m.Filter = r.utf8String("rto query filter")
	if r.err == nil && len(m.Filter) > MaxFilterLen {
		r.fail("rto query: filter of %d bytes exceeds %d", len(m.Filter), MaxFilterLen)
	}
	m.Filters = readFilters(r, "rto query vector")
	if r.err == nil && (len(m.Filters) == 0 || len(m.Filters) > MaxVector) {
		r.fail("rto query: vector of %d filters (want 1-%d)", len(m.Filters), MaxVector)
	}
	return m
}

// RTOAnswer is a client's return vector for query Q: bitmaps (64 filters
// per word, filter i at bit i%64 of word i/64) of the filters that cover
// the query's filter (Up), that it covers (Down) and that overlap it
// (Overlap). The three bitmaps have the same number of words.
type RTOAnswer struct {
	Q                 uint64
	Up, Down, Overlap []uint64
}

// Type returns TypeRTOAnswer.
func (*RTOAnswer) Type() Type { return TypeRTOAnswer }

// AppendBody appends q, the word count and the three bitmaps (fixed 64-bit
// little-endian words).
func (m *RTOAnswer) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.Q)
	b = binary.AppendUvarint(b, uint64(len(m.Up)))
	for _, words := range [][]uint64{m.Up, m.Down, m.Overlap} {
		for _, w := range words {
			b = binary.LittleEndian.AppendUint64(b, w)
		}
	}
	return b
}

func decodeRTOAnswer(r *reader) *RTOAnswer {
	m := &RTOAnswer{Q: r.uvarint("rto answer id")}
	n := r.count("rto answer words", 24)
	if r.err == nil && n > MaxVector/64 {
		r.fail("rto answer: %d words exceed %d", n, MaxVector/64)
	}
	if r.err != nil {
		return m
	}
	m.Up, m.Down, m.Overlap = readWords(r, n), readWords(r, n), readWords(r, n)
	return m
}

func readWords(r *reader, n int) []uint64 {
	out := make([]uint64, n)
	r.fixed64s("bitmap word", out)
	return out
}

// FFFixed publishes the router's fixed filters (FF) to an assisting
// client, in the router's order; an FFClaim's bits refer to it. Gen
// numbers the set, so a claim made against an older set is recognised.
type FFFixed struct {
	Gen     uint64
	Filters []string
}

// Type returns TypeFFFixed.
func (*FFFixed) Type() Type { return TypeFFFixed }

// AppendBody appends gen and the filters.
func (m *FFFixed) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.Gen)
	return appendStrings(b, m.Filters)
}

func decodeFFFixed(r *reader) *FFFixed {
	m := &FFFixed{Gen: r.uvarint("ff fixed gen")}
	m.Filters = readFilters(r, "ff fixed filters")
	if r.err == nil && len(m.Filters) > MaxVector {
		r.fail("ff fixed: %d filters exceed %d", len(m.Filters), MaxVector)
	}
	return m
}

// FFClaim says which fixed filters of set Gen cover the filter of the
// client's subscription Sub (bitmap as in RTOAnswer). The client sends it
// on the control stream right before that Subscribe.
type FFClaim struct {
	Gen, Sub uint64
	Covering []uint64
}

// Type returns TypeFFClaim.
func (*FFClaim) Type() Type { return TypeFFClaim }

// AppendBody appends gen, sub, the word count and the words.
func (m *FFClaim) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.Gen)
	b = binary.AppendUvarint(b, m.Sub)
	b = binary.AppendUvarint(b, uint64(len(m.Covering)))
	for _, w := range m.Covering {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

func decodeFFClaim(r *reader) *FFClaim {
	m := &FFClaim{Gen: r.uvarint("ff claim gen"), Sub: r.uvarint("ff claim sub")}
	n := r.count("ff claim words", 8)
	if r.err == nil && n > MaxVector/64 {
		r.fail("ff claim: %d words exceed %d", n, MaxVector/64)
	}
	if r.err == nil {
		m.Covering = readWords(r, n)
	}
	return m
}
