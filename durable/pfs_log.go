package durable

// PFSLog is one PFS log stream used on its own, outside an SHB: for tools
// and for benchmarks that compare the PFS with other layouts on the same
// disk. Append and Chop stage writes; TakeBatch returns them for the caller
// to apply (records, lastIndex and lastTimestamp of a batch are atomic).
type PFSLog struct {
	w *pendingWrites
	f *pfs
}

// NewPFSLog returns an empty PFS log stream for pubend over st. It keeps
// no records in memory, so every Read measures the layout on disk.
func NewPFSLog(pubend string, st Store) *PFSLog {
	w := newPendingWrites(st)
	return &PFSLog{w: w, f: newPFS(pubend, w, 0)}
}

// Append stages the record of tick t for the matched subscriber ids
// (ascending). A tick at or below the last one is ignored.
func (l *PFSLog) Append(t Tick, sids []uint64) {
	l.f.append(t, sids)
	l.w.set(shbMetaKey(l.f.pubend), encodeTicks(0, 0, l.f.lastTS, Tick(l.f.next), Tick(l.f.first)))
}

// Read returns, ascending, the ticks in (a, b] whose records list sid.
func (l *PFSLog) Read(sid uint64, a, b Tick) ([]Tick, error) { return l.f.read(sid, a, b) }

// Chop stages the deletion of every record at or below upto.
func (l *PFSLog) Chop(upto Tick) error { return l.f.chop(upto) }

// TakeBatch returns the staged writes.
func (l *PFSLog) TakeBatch() *Batch { return l.w.take() }
