package durable

import (
	"fmt"
	"slices"
)

// pfsEntry is one subscriber in a PFS record: its sid and the index of its
// previous record (0: none).
type pfsEntry struct {
	sid, prev uint64
}

// pfsRecord is the PFS record of one tick: the durable subscribers it
// matched, each with a back-pointer (the seed's Figure 2).
type pfsRecord struct {
	tick    Tick
	entries []pfsEntry
}

func (r pfsRecord) encode() []byte {
	e := encoder{}
	e.Byte(recordV1)
	e.tick(r.tick)
	e.Uvarint(uint64(len(r.entries)))
	for _, en := range r.entries {
		e.Uvarint(en.sid)
		e.Uvarint(en.prev)
	}
	return e.B
}

func decodePFSRecord(b []byte) (pfsRecord, error) {
	d := newDecoder(b)
	if v := d.Byte(); d.Err == nil && v != recordV1 {
		return pfsRecord{}, fmt.Errorf("pfs record: unknown version %d", v)
	}
	r := pfsRecord{tick: d.tick()}
	n := d.Count(2)
	for range n {
		r.entries = append(r.entries, pfsEntry{sid: d.Uvarint(), prev: d.Uvarint()})
	}
	if err := d.Done(); err != nil {
		return pfsRecord{}, fmt.Errorf("pfs record: %w", err)
	}
	return r, nil
}

// pfs is the persistent filtering subsystem's log stream of one pubend at
// an SHB: records numbered from 1, per-subscriber lastIndex, the tick of
// the newest record (lastTimestamp), and the first index not chopped.
type pfs struct {
	pubend    string
	w         *pendingWrites
	lastTS    Tick
	next      uint64 // index of the next record
	first     uint64 // lowest index not chopped
	lastIndex map[uint64]uint64
	// recent holds the newest records appended, decoded, at slot index
	// mod pfsRecent: catch-up streams read what the constream just
	// recorded (a subscriber whose queue filled, an SHB filling a long
	// outage), and a read from memory spares a store lookup and a decode
	// per record. Records never change once written, so a slot is valid
	// while it holds its index and the index is not chopped.
	recent []recentRecord
}

// recentRecord is a slot of pfs.recent: record rec at index idx (0: empty).
type recentRecord struct {
	idx uint64
	rec pfsRecord
}

// pfsRecent is how many of the newest PFS records are kept decoded in
// memory.
const pfsRecent = 8192

// newPFS returns an empty PFS log stream keeping the newest recent
// records in memory (0: none; every read goes to the store).
func newPFS(pubend string, w *pendingWrites, recent int) *pfs {
	return &pfs{pubend: pubend, w: w, next: 1, first: 1, lastIndex: map[uint64]uint64{},
		recent: make([]recentRecord, recent)}
}

// append writes the record of tick t for the matched sids (sorted), and
// their lastIndex, into the pending batch. The caller persists
// lastTimestamp and the next index with its metadata in the same batch.
func (f *pfs) append(t Tick, sids []uint64) {
	if t <= f.lastTS {
		return // already recorded before a restart (rule SHB 8)
	}
	rec := pfsRecord{tick: t}
	i := f.next
	for _, sid := range sids {
		rec.entries = append(rec.entries, pfsEntry{sid: sid, prev: f.lastIndex[sid]})
		f.lastIndex[sid] = i
		f.w.set(pfsLastKey(f.pubend, sid), encodeTicks(Tick(i)))
	}
	f.w.set(pfsRecordKey(f.pubend, i), rec.encode())
	if len(f.recent) > 0 {
		f.recent[i%uint64(len(f.recent))] = recentRecord{idx: i, rec: rec}
	}
	f.next++
	f.lastTS = t
}

// read returns, ascending, the ticks in (a, b] whose records list sid: the
// D ticks of that subscriber; every other tick in (a, min(b,
// lastTimestamp)] is S for it. It follows the back-pointers from
// lastIndex(sid); a pointer into the chopped prefix ends the walk.
func (f *pfs) read(sid uint64, a, b Tick) ([]Tick, error) {
	var ticks []Tick
	for i := f.lastIndex[sid]; i >= f.first && i != 0; {
		rec, err := f.get(i)
		if err != nil {
			return nil, err
		}
		if rec.tick <= a {
			break
		}
		if rec.tick <= b {
			ticks = append(ticks, rec.tick)
		}
		next, ok := rec.prevOf(sid)
		if !ok {
			return nil, fmt.Errorf("pfs %s: record %d does not list sid %d", f.pubend, i, sid)
		}
		i = next
	}
	slices.Reverse(ticks)
	return ticks, nil
}

func (r pfsRecord) prevOf(sid uint64) (uint64, bool) {
	for _, e := range r.entries {
		if e.sid == sid {
			return e.prev, true
		}
	}
	return 0, false
}

// get returns record i, from memory when it is one of the newest.
func (f *pfs) get(i uint64) (pfsRecord, error) {
	if len(f.recent) > 0 {
		if r := f.recent[i%uint64(len(f.recent))]; r.idx == i && i >= f.first {
			return r.rec, nil
		}
	}
	v, ok, err := f.w.get(pfsRecordKey(f.pubend, i))
	if err != nil {
		return pfsRecord{}, fmt.Errorf("pfs %s: read record %d: %w", f.pubend, i, err)
	}
	if !ok {
		return pfsRecord{}, fmt.Errorf("pfs %s: record %d missing", f.pubend, i)
	}
	return decodePFSRecord(v)
}

// chop deletes every record whose tick is at or below upto (released
// ticks).
func (f *pfs) chop(upto Tick) error {
	lo, err := f.firstAbove(upto)
	if err != nil {
		return err
	}
	if lo == f.first {
		return nil
	}
	f.w.deleteRange(pfsRecordKey(f.pubend, f.first), pfsRecordKey(f.pubend, lo))
	for i := f.first; i < lo; i++ {
		delete(f.w.overlay, string(pfsRecordKey(f.pubend, i)))
	}
	f.first = lo
	return nil
}

// records returns the number of records not chopped.
func (f *pfs) records() uint64 { return f.next - f.first }

// countIn returns the number of records, not chopped, whose tick is in r.
func (f *pfs) countIn(r Range) (int, error) {
	lo, err := f.firstAbove(r.From - 1)
	if err != nil {
		return 0, err
	}
	hi, err := f.firstAbove(r.To)
	if err != nil {
		return 0, err
	}
	return int(hi - lo), nil
}

// firstAbove returns the index of the first record not chopped whose
// tick is above t (f.next if none). Record ticks increase with the index,
// so it is a binary search.
func (f *pfs) firstAbove(t Tick) (uint64, error) {
	lo, hi := f.first, f.next
	for lo < hi {
		mid := lo + (hi-lo)/2
		rec, err := f.get(mid)
		if err != nil {
			return 0, err
		}
		if rec.tick <= t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, nil
}
