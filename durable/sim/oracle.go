package sim

import (
	"bytes"
	"slices"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
)

// oracle knows every event the pubends made durable and checks what the
// subscribers receive against it.
type oracle struct {
	early  bool                                 // early release is on
	events map[string]map[durable.Tick]pubEvent // per pubend
	ticks  map[string][]durable.Tick            // per pubend, sorted
	bySeq  map[string]durable.Tick              // "pubend/publisher/seq" -> tick
	lost   map[string]durable.Tick              // per pubend, the durable L prefix
	// heldLost is per pubend the highest L prefix announced above the
	// durable one: a release over silent ticks the pubend had not yet
	// written when it announced it (see lostAnnounced).
	heldLost map[string]durable.Tick
	ld       map[string]map[string]durable.Tick // per pubend, per SHB, the durable LD
	// dropped: per pubend, the SHBs its PHB has durably dropped for their
	// absence (rule PHB 6), which release does not wait for.
	dropped map[string]map[string]bool
	// learn: pubends learn their members (Config.LearnSHBs). base: per
	// pubend, per SHB that durably became a member, the pubend's L
	// prefix when it did; an SHB not in it is not a member yet.
	learn bool
	base  map[string]map[string]durable.Tick
	// announcements: per pubend, the knowledge its PHB ever announced.
	announcements map[string]*durable.Stream
}

type pubEvent struct {
	publisher string
	seq       uint64
	event     match.Event
}

func newOracle(early, learn bool) *oracle {
	return &oracle{early: early, learn: learn, base: map[string]map[string]durable.Tick{}, events: map[string]map[durable.Tick]pubEvent{},
		ticks: map[string][]durable.Tick{}, bySeq: map[string]durable.Tick{}, lost: map[string]durable.Tick{}, heldLost: map[string]durable.Tick{},
		ld: map[string]map[string]durable.Tick{}, dropped: map[string]map[string]bool{},
		announcements: map[string]*durable.Stream{}}
}

// logged records the log entries of a durable PHB batch and checks that no
// (publisher, sequence) is logged twice.
func (o *oracle) logged(w *world, p string, b *durable.Batch) {
	pre := durable.PHBLogPrefix(p)
	for _, op := range b.Ops {
		if op.Kind != durable.OpSet || !bytes.HasPrefix(op.Key, pre) || len(op.Key) != len(pre)+8 {
			continue
		}
		t := durable.Tick(beUint64(op.Key[len(pre):]))
		pub, seq, ev, err := durable.DecodeLogRecord(op.Value)
		if err != nil {
			w.violate("pubend %s: undecodable log record at %d: %v", p, t, err)
			continue
		}
		key := seqKey(p, pub, seq)
		if old, ok := o.bySeq[key]; ok && old != t {
			w.violate("pubend %s: publisher %s sequence %d logged twice, at ticks %d and %d", p, pub, seq, old, t)
			continue
		}
		o.bySeq[key] = t
		if o.events[p] == nil {
			o.events[p] = map[durable.Tick]pubEvent{}
		}
		if _, ok := o.events[p][t]; !ok {
			o.ticks[p] = insertSorted(o.ticks[p], t)
		}
		o.events[p][t] = pubEvent{publisher: pub, seq: seq, event: ev}
	}
}

// released records a pubend's durable L prefix.
func (o *oracle) released(p string, lost durable.Tick) {
	o.lost[p] = max(o.lost[p], lost)
}

// acked checks a publish acknowledgement against the log.
func (o *oracle) acked(w *world, p, pub string, seq uint64, t durable.Tick) {
	if got, ok := o.bySeq[seqKey(p, pub, seq)]; !ok || got != t {
		w.violate("publisher %s sequence %d acknowledged at tick %d, logged at %d (logged: %v)", pub, seq, t, got, ok)
	}
}

// check verifies one message to a subscriber against its CT and the log.
func (o *oracle) check(w *world, s *subscriber, m durable.Msg) {
	p := m.Pubend
	last := s.ct[p]
	t := m.Tick
	if m.Kind == durable.MsgGap {
		t = m.To
	}
	if t <= last {
		w.violate("subscriber %s: %v at or below its CT %d (duplicate or out of order)", s.id, m, last)
		return
	}
	switch m.Kind {
	case durable.MsgEvent:
		o.checkEvent(w, s, m)
		o.checkNoneMatching(w, s, p, last, t-1, m)
	case durable.MsgSubSilence:
		o.checkNoneMatching(w, s, p, last, t, m)
	case durable.MsgGap:
		o.checkGap(w, s, m, last)
	}
	s.ct[p] = t
}

func (o *oracle) checkEvent(w *world, s *subscriber, m durable.Msg) {
	pe, ok := o.events[m.Pubend][m.Tick]
	switch {
	case !ok:
		w.violate("subscriber %s: %v: no event was logged at that tick", s.id, m)
	case !pe.event.Equal(m.Event):
		w.violate("subscriber %s: %v: the logged event is %v", s.id, m, pe.event)
	case !s.filter.Matches(m.Event):
		w.violate("subscriber %s: %v does not match its filter %s", s.id, m, s.filter)
	}
	w.stats.Delivered++
}

// checkNoneMatching reports any logged event matching s in (from, to].
func (o *oracle) checkNoneMatching(w *world, s *subscriber, p string, from, to durable.Tick, m durable.Msg) {
	ts := o.ticks[p]
	i, _ := slices.BinarySearch(ts, from+1)
	for ; i < len(ts) && ts[i] <= to; i++ {
		if s.filter.Matches(o.events[p][ts[i]].event) {
			w.violate("subscriber %s: %v skipped the matching event at tick %d", s.id, m, ts[i])
			return
		}
	}
}

// checkGap verifies that a gap starts right after the CT, covers only
// released ticks and at least one that held an event, and, without early
// release, only ticks the subscriber had acknowledged.
func (o *oracle) checkGap(w *world, s *subscriber, m durable.Msg, last durable.Tick) {
	w.stats.Gaps++
	if m.From != last+1 {
		w.violate("subscriber %s: %v does not start right after its CT %d", s.id, m, last)
	}
	if released := max(o.lost[m.Pubend], o.heldLost[m.Pubend]); m.To > released {
		w.violate("subscriber %s: %v covers ticks above the released prefix %d", s.id, m, released)
	}
	if ts := o.ticks[m.Pubend]; !anyIn(ts, m.From, m.To) {
		// Nothing was logged there: every tick was S, so nothing was
		// lost and a silence would have said so.
		w.violate("subscriber %s: %v over ticks that held only silence", s.id, m)
	}
	if !o.early && m.To > s.maxAcked[m.Pubend] {
		w.violate("subscriber %s: %v without early release reaches above its acknowledged CT %d",
			s.id, m, s.maxAcked[m.Pubend])
	}
}

// anyIn reports whether the ascending ticks ts hold one in [from, to].
func anyIn(ts []durable.Tick, from, to durable.Tick) bool {
	i, _ := slices.BinarySearch(ts, from)
	return i < len(ts) && ts[i] <= to
}

// lastTick returns the highest logged tick of pubend p.
func (o *oracle) lastTick(p string) durable.Tick {
	ts := o.ticks[p]
	if len(ts) == 0 {
		return 0
	}
	return ts[len(ts)-1]
}

func seqKey(p, pub string, seq uint64) string {
	return p + "/" + pub + "/" + string(rune(0)) + itoa(seq)
}

func itoa(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func beUint64(b []byte) uint64 {
	var v uint64
	for _, c := range b[:8] {
		v = v<<8 | uint64(c)
	}
	return v
}

func insertSorted(ts []durable.Tick, t durable.Tick) []durable.Tick {
	i, _ := slices.BinarySearch(ts, t)
	return slices.Insert(ts, i, t)
}

// releasedIn records the L prefix persisted by a durable PHB batch.
func (o *oracle) releasedIn(w *world, p string, b *durable.Batch) {
	// An SHB dropped at any point of the batch may have been taken back
	// later in it: a release in the batch may have been decided while it
	// was dropped.
	excused := o.droppedIn(p, b)
	joined := o.membersIn(p, b)
	key := durable.PHBMetaKey(p)
	for _, op := range b.Ops {
		if op.Kind != durable.OpSet || !bytes.Equal(op.Key, key) {
			continue
		}
		_, lost, err := durable.DecodePHBMeta(op.Value)
		if err != nil {
			w.violate("pubend %s: %v", p, err)
			continue
		}
		if lost > o.lost[p] {
			// A release: it must respect every member SHB's LD. (The
			// record is rewritten for the high-water mark too, and an
			// SHB taken back after a drop may lag the prefix for a
			// while: the PHB releases nothing more until it caught up.)
			o.released(p, lost)
			o.checkReleaseBound(w, p, o.lost[p], excused)
		}
	}
	for _, shb := range joined {
		o.base[p][shb] = o.lost[p]
	}
}

// membersIn returns the SHBs a durable PHB batch makes members (learned,
// PubendConfig.LearnSHBs) that were not members before it. Their base is
// the L prefix the batch leaves: a release in the same batch was decided
// before they joined, or bounded by their own report.
func (o *oracle) membersIn(p string, b *durable.Batch) []string {
	if !o.learn {
		return nil
	}
	if o.base[p] == nil {
		o.base[p] = map[string]durable.Tick{}
	}
	pre := durable.PHBMemberPrefix(p)
	var out []string
	for _, op := range b.Ops {
		if op.Kind != durable.OpSet || !bytes.HasPrefix(op.Key, pre) {
			continue
		}
		if shb := string(op.Key[len(pre):]); !slices.Contains(out, shb) {
			if _, ok := o.base[p][shb]; !ok {
				out = append(out, shb)
			}
		}
	}
	return out
}

// checkReleaseBound checks that the pubend's release up to lost is not above what
// every SHB had durably delivered to its up-to-date subscribers (Td): so no
// up-to-date subscriber can ever meet an L tick, and none gets a gap. When
// pubends learn their members, an SHB counts from when it became one, and
// above the L prefix it joined at: before, no subscription of it can start
// at or below the pubend's release (an install is acknowledged only once
// its SHB is a member; see the gap checks for the rest).
func (o *oracle) checkReleaseBound(w *world, p string, lost durable.Tick, excused map[string]bool) {
	for _, shb := range w.shbNames() {
		if excused[shb] {
			continue // dropped: its subscribers get gaps (rule PHB 6)
		}
		ld := o.ld[p][shb]
		if o.learn {
			base, member := o.base[p][shb]
			if !member {
				continue
			}
			ld = max(ld, base)
		}
		if lost > ld {
			w.violate("pubend %s released up to %d, above the latestDelivered %d of %s", p, lost, ld, shb)
			return
		}
	}
}

// deliveredIn records the latestDelivered values persisted by an SHB batch.
func (o *oracle) deliveredIn(w *world, shb string, b *durable.Batch) {
	for _, p := range w.pubendNames() {
		key := durable.SHBMetaKey(p)
		for _, op := range b.Ops {
			if op.Kind != durable.OpSet || !bytes.Equal(op.Key, key) {
				continue
			}
			ld, err := durable.DecodeSHBMeta(op.Value)
			if err != nil {
				w.violate("%s: %v", shb, err)
				continue
			}
			if o.ld[p] == nil {
				o.ld[p] = map[string]durable.Tick{}
			}
			o.ld[p][shb] = max(o.ld[p][shb], ld)
		}
	}
}

// droppedIn records the SHBs a durable PHB batch drops or takes back, and
// returns those dropped at any point of the batch.
func (o *oracle) droppedIn(p string, b *durable.Batch) map[string]bool {
	excused := map[string]bool{}
	for shb, d := range o.dropped[p] {
		excused[shb] = d
	}
	pre := durable.PHBDropPrefix(p)
	for _, op := range b.Ops {
		if !bytes.HasPrefix(op.Key, pre) || op.Kind == durable.OpDeleteRange {
			continue
		}
		if o.dropped[p] == nil {
			o.dropped[p] = map[string]bool{}
		}
		shb := string(op.Key[len(pre):])
		o.dropped[p][shb] = op.Kind == durable.OpSet
		// A deletion is a take-back, so the SHB was dropped before it:
		// in an earlier batch, or in this one, the drop's write replaced
		// by the deletion (a batch writes each key once).
		excused[shb] = true
	}
	return excused
}
