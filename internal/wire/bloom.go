package wire

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// Bloom forwarding on router links (docs/protocol.md, "Bloom forwarding"): the
// parameters routers announce in LinkHello, the dictionary terms they
// flood on the control stream (BloomTerms), and events carried with their
// summaries on the data stream (BloomPublish).

// Bounds of the Bloom parameters a LinkHello may carry.
const (
	// MaxBloomM bounds the bits of a summary (and so its words).
	MaxBloomM = 1 << 16
	// MaxBloomK bounds the bits set per term.
	MaxBloomK = 64
	// MaxHashName bounds the hash family's name.
	MaxHashName = 64
	// MaxBloomTerms bounds the terms of one BloomTerms message.
	MaxBloomTerms = 1 << 20
)

// BloomParams are the Bloom forwarding parameters of a router: summaries of
// M bits, K bits per dictionary term, hashes of family Hash seeded with
// Seed, and flat (unqualified) terms when Flat is set. Linked routers must
// announce equal parameters.
type BloomParams struct {
	M, K uint64
	Seed uint64
	Flat bool
	Hash string
}

func appendBloomParams(b []byte, p *BloomParams) []byte {
	if p == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendUvarint(b, p.M)
	b = binary.AppendUvarint(b, p.K)
	b = binary.AppendUvarint(b, p.Seed)
	b = append(b, boolByte(p.Flat))
	return appendString(b, p.Hash)
}

// readBloomParams reads the forwarding mode of a LinkHello: nil for exact
// forwarding, the parameters for Bloom forwarding.
func readBloomParams(r *reader) *BloomParams {
	switch r.byte("link hello forwarding mode") {
	case 0:
		return nil
	case 1:
	default:
		r.fail("link hello: forwarding mode is not 0 (exact) or 1 (bloom)")
		return nil
	}
	p := &BloomParams{M: r.uvarint("bloom m"), K: r.uvarint("bloom k"), Seed: r.uvarint("bloom seed")}
	switch r.byte("bloom flat") {
	case 0:
	case 1:
		p.Flat = true
	default:
		r.fail("bloom params: flat flag is not 0 or 1")
	}
	p.Hash = r.utf8String("bloom hash family")
	switch {
	case r.err != nil:
	case p.M < 64 || p.M > MaxBloomM || p.M%64 != 0:
		r.fail("bloom params: m = %d is not a multiple of 64 in [64, %d]", p.M, MaxBloomM)
	case p.K == 0 || p.K > MaxBloomK:
		r.fail("bloom params: k = %d is not in [1, %d]", p.K, MaxBloomK)
	case p.Hash == "" || len(p.Hash) > MaxHashName:
		r.fail("bloom params: hash family name of %d bytes (want 1-%d)", len(p.Hash), MaxHashName)
	}
	return p
}

// BloomTerm is one dictionary term on the wire: Qual, the filter text of
// the qualifying equalities (empty for an unqualified term), and C, the
// text of the term's one constraint. The receiver parses both.
type BloomTerm struct {
	Qual, C string
}

// BloomTerms changes the set of dictionary terms the sender has, on its
// side of the link, in use by some subscription: remove every term in
// Remove, then add every term in Add. A Snapshot replaces the whole set by
// Add (Remove is then empty); each side sends one when the link comes up.
// The sets are sets: adding a term the receiver already holds from the
// sender, or removing one it does not, is a protocol error.
type BloomTerms struct {
	Snapshot bool
	Remove   []BloomTerm
	Add      []BloomTerm
}

// Type returns TypeBloomTerms.
func (*BloomTerms) Type() Type { return TypeBloomTerms }

// AppendBody appends the snapshot flag and both term lists.
func (m *BloomTerms) AppendBody(b []byte) []byte {
	b = append(b, boolByte(m.Snapshot))
	b = appendTerms(b, m.Remove)
	return appendTerms(b, m.Add)
}

func appendTerms(b []byte, ts []BloomTerm) []byte {
	b = binary.AppendUvarint(b, uint64(len(ts)))
	for _, t := range ts {
		b = appendString(b, t.Qual)
		b = appendString(b, t.C)
	}
	return b
}

func decodeBloomTerms(r *reader) *BloomTerms {
	m := &BloomTerms{}
	switch r.byte("bloom terms snapshot") {
	case 0:
	case 1:
		m.Snapshot = true
	default:
		r.fail("bloom terms: snapshot flag is not 0 or 1")
	}
	m.Remove = readTerms(r, "bloom terms remove")
	m.Add = readTerms(r, "bloom terms add")
	if r.err == nil && m.Snapshot && len(m.Remove) > 0 {
		r.fail("bloom terms: a snapshot removes nothing (%d removals)", len(m.Remove))
	}
	return m
}

func readTerms(r *reader, what string) []BloomTerm {
	n := r.count(what+" count", 2)
	if n > MaxBloomTerms {
		r.fail("%s: %d terms exceed %d", what, n, MaxBloomTerms)
		return nil
	}
	out := make([]BloomTerm, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		t := BloomTerm{Qual: r.utf8String(what + " qualifier"), C: r.utf8String(what + " constraint")}
		if r.err == nil && (len(t.Qual) > MaxFilterLen || len(t.C) > MaxFilterLen || t.C == "") {
			r.fail("%s: term of %d+%d bytes (constraint 1-%d bytes, qualifier at most %d)", what, len(t.Qual), len(t.C), MaxFilterLen, MaxFilterLen)
		}
		out = append(out, t)
	}
	return out
}

// Summary encodings of a BloomPublish entry.
const (
	summaryExact  byte = 0 // no summary: routers decide exactly
	summaryDense  byte = 1 // word count, then the words, 8 bytes each
	summarySparse byte = 2 // word count, bit count, then positions as varint gaps
)

// entryWitness, set in an entry's encoding byte, says a witness (8 bytes,
// little endian, not zero) follows that byte. Only links that negotiated
// VersionBloomWitness carry it.
const entryWitness byte = 0x80

// MaxSummaryWords bounds the 64-bit words of a summary.
const MaxSummaryWords = MaxBloomM / 64

// BloomEvent is one event of a BloomPublish: the encoded event (as
// AppendEvent writes it; the decoder does not decode it, so routers that
// only forward never parse events) and either its summary or Exact, which
// says the first router found the summary too full to be useful and
// routers must match the event exactly.
//
// Witness, when not zero, is the hash (FilterHash) of a filter the sender
// found the event to match among those the receiver forwarded to it, as
// in LinkPublish: the receiver checks that filter first, on the summary
// or (Exact) on the event, and searches only when that fails. A witness
// is a hint that saves the search, never a reason to forward: a wrong one
// costs a lookup.
type BloomEvent struct {
	Exact   bool
	Summary []uint64 // the summary's words; empty when Exact
	Event   []byte   // the encoded event
	Witness uint64   // 0: none
	// Entry is the entry's whole encoding as received (aliasing the frame
	// body), so routers forward it without encoding it again (BloomBatch
	// sets or drops its witness). AppendBody ignores it.
	Entry []byte
}

// AppendBloomEvent appends one BloomPublish entry: the summary (nil when
// exact), in whichever of the dense and sparse encodings is shorter (dense
// on a tie), then the encoded event with its length. It grows b at most
// once, and not at all when b has room for the event and 24 bytes a
// summary word.
func AppendBloomEvent(b []byte, exact bool, summary []uint64, event []byte) []byte {
	tail := uvarintLen(uint64(len(event))) + len(event)
	if exact {
		b = slices.Grow(b, 1+tail)
		b = append(b, summaryExact)
		return appendBytes(b, event)
	}
	count := 0
	for _, w := range summary {
		count += bits.OnesCount64(w)
	}
	dense := 8 * len(summary)
	// Sparse takes at least a byte per bit and at most 3 (a gap is below
	// MaxBloomM = 2^16), plus the count.
	sparse := uvarintLen(uint64(count)) + 3*count
	trySparse := sparse-2*count < dense
	room := dense
	if trySparse {
		room = max(dense, sparse)
	}
	b = slices.Grow(b, 1+uvarintLen(uint64(len(summary)))+room+tail)
	start := len(b)
	b = append(b, summarySparse)
	b = binary.AppendUvarint(b, uint64(len(summary)))
	head := len(b)
	if trySparse {
		b = appendSparse(b, summary, count)
	}
	if !trySparse || len(b)-head >= dense {
		b = b[:head]
		b[start] = summaryDense
		for _, w := range summary {
			b = binary.LittleEndian.AppendUint64(b, w)
		}
	}
	return appendBytes(b, event)
}

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// appendSparse appends the count of set bits, then each position as the
// gap from the previous position plus one (so the first is its position).
func appendSparse(b []byte, words []uint64, count int) []byte {
	b = binary.AppendUvarint(b, uint64(count))
	prev := -1
	for i, w := range words {
		for w != 0 {
			pos := 64*i + bits.TrailingZeros64(w)
			b = binary.AppendUvarint(b, uint64(pos-prev-1))
			prev = pos
			w &= w - 1
		}
	}
	return b
}

// BloomPublish carries a batch of events with their summaries on a router
// link's data stream, in Bloom forwarding mode. Seq numbers the frames
// only: links do not acknowledge events.
type BloomPublish struct {
	Seq    uint64
	Events []BloomEvent
}

// Type returns TypeBloomPublish.
func (*BloomPublish) Type() Type { return TypeBloomPublish }

// AppendBody appends seq, the entry count and the entries, each with its
// witness when it has one.
func (m *BloomPublish) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.Seq)
	b = binary.AppendUvarint(b, uint64(len(m.Events)))
	var entry []byte
	for _, e := range m.Events {
		entry = AppendBloomEvent(entry[:0], e.Exact, e.Summary, e.Event)
		b = appendEntryWitness(b, entry, e.Witness)
	}
	return b
}

// appendEntryWitness appends entry (an encoded entry, with or without a
// witness) with witness in place of the one it carries: none when witness
// is zero.
func appendEntryWitness(b, entry []byte, witness uint64) []byte {
	enc, rest := entry[0]&^entryWitness, entry[1:]
	if entry[0]&entryWitness != 0 {
		rest = rest[8:]
	}
	if witness == 0 {
		return append(append(b, enc), rest...)
	}
	b = binary.LittleEndian.AppendUint64(append(b, enc|entryWitness), witness)
	return append(b, rest...)
}

func decodeBloomPublish(r *reader) *BloomPublish {
	m := &BloomPublish{Seq: r.uvarint("bloom publish seq")}
	n := r.count("bloom publish event count", 2)
	if r.err != nil {
		return m
	}
	m.Events = make([]BloomEvent, 0, n)
	var slab []uint64 // the summaries' words, a few allocations per frame
	for i := range n {
		start := r.b
		e := readBloomEvent(r, &slab, min(n-i, 64))
		if r.err != nil {
			return m
		}
		used := len(start) - len(r.b)
		e.Entry = start[:used:used]
		m.Events = append(m.Events, e)
	}
	return m
}

// readBloomEvent reads one entry, cutting its summary out of *slab, which
// it refills with room for ahead summaries of the same size.
func readBloomEvent(r *reader, slab *[]uint64, ahead int) BloomEvent {
	var e BloomEvent
	enc := r.byte("bloom event summary encoding")
	if enc&entryWitness != 0 && r.err == nil {
		enc &^= entryWitness
		if e.Witness = r.fixed64("bloom event witness"); r.err == nil && e.Witness == 0 {
			r.fail("bloom event: witness 0 (an entry without a witness does not set the flag)")
		}
	}
	if r.err != nil {
		return e
	}
	switch enc {
	case summaryExact:
		e.Exact = true
	case summaryDense, summarySparse:
		nw := r.uvarint("bloom event summary words")
		if r.err == nil && (nw == 0 || nw > MaxSummaryWords) {
			r.fail("bloom event: summary of %d words (want 1-%d)", nw, MaxSummaryWords)
		}
		if r.err != nil {
			return e
		}
		if cap(*slab)-len(*slab) < int(nw) {
			*slab = make([]uint64, 0, uint64(ahead)*nw)
		}
		start := len(*slab)
		*slab = append(*slab, make([]uint64, nw)...)
		e.Summary = (*slab)[start : start+int(nw) : start+int(nw)]
		if enc == summaryDense {
			r.fixed64s("bloom event summary word", e.Summary)
		} else {
			readSparse(r, e.Summary)
		}
	default:
		r.fail("bloom event: unknown summary encoding %d", enc)
	}
	e.Event = r.bytes("bloom event")
	if r.err == nil && len(e.Event) == 0 {
		r.fail("bloom event: empty event encoding")
	}
	return e
}

// readSparse sets the bits a sparse summary lists into words, which must
// hold every position. It reads the gaps from a local copy of the body
// and stores the rest back once: no write barrier per byte.
func readSparse(r *reader, words []uint64) {
	n := r.count("bloom event summary bit count", 1)
	if r.err != nil {
		return
	}
	limit := uint64(64 * len(words))
	b, pos := r.b, uint64(0)
	for i := range n {
		gap := uint64(0)
		if len(b) > 0 && b[0] < 0x80 {
			gap, b = uint64(b[0]), b[1:]
		} else {
			v, k := binary.Uvarint(b)
			if k <= 0 {
				r.fail("bloom event summary gap: truncated or overlong varint")
				return
			}
			gap, b = v, b[k:]
		}
		if gap >= limit { // before the increment: a huge gap would wrap
			r.fail("bloom event: summary bit beyond %d", limit)
			return
		}
		if i > 0 {
			gap++ // positions strictly increase
		}
		if pos+gap >= limit {
			r.fail("bloom event: summary bit beyond %d", limit)
			return
		}
		pos += gap
		words[pos>>6] |= 1 << (pos & 63)
	}
	r.b = b
}

// BloomBatch accumulates BloomPublish entries (from AppendBloomEvent or a
// received BloomEvent.Entry) for one frame.
type BloomBatch struct {
	buf []byte
	n   int
}

// AddEntry adds one encoded entry with witness in place of the one it
// carries (0: none, as a link that did not negotiate VersionBloomWitness
// must get).
func (p *BloomBatch) AddEntry(entry []byte, witness uint64) {
	p.buf = appendEntryWitness(p.buf, entry, witness)
	p.n++
}

// Len returns the number of entries.
func (p *BloomBatch) Len() int { return p.n }

// Size returns the encoded size of the entries so far.
func (p *BloomBatch) Size() int { return len(p.buf) }

// AppendFrame appends the entries as a BloomPublish frame numbered seq.
func (p *BloomBatch) AppendFrame(b []byte, seq uint64) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, byte(TypeBloomPublish))
	b = binary.AppendUvarint(b, seq)
	b = binary.AppendUvarint(b, uint64(p.n))
	b = append(b, p.buf...)
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-HeaderLen))
	return b
}

// Reset empties the batch, keeping its buffer.
func (p *BloomBatch) Reset() {
	p.buf = p.buf[:0]
	p.n = 0
}
