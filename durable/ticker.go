package durable

// Ticker assigns a pubend's ticks (docs/durable.md, rules T1 and T2). It
// tracks the last tick assigned to an event, the last tick announced
// downstream (as data or silence) and the persisted high-water mark: no tick
// above the mark may be announced until a higher mark is persisted, and
// after a restart assignment resumes above the persisted mark, so no
// announced tick is ever announced again with other content.
type Ticker struct {
	lastAssigned  Tick
	lastAnnounced Tick
	mark          Tick // persisted high-water mark
	lease         Tick // how far ahead a new mark is set
}

// NewTicker returns a ticker restarted from a persisted high-water mark:
// every tick at or below it counts as assigned and announced. lease is how
// far above the needed tick a new mark is set (at least 1).
func NewTicker(mark, lease Tick) *Ticker {
	return &Ticker{lastAssigned: mark, lastAnnounced: mark, mark: mark, lease: max(lease, 1)}
}

// Assign returns the tick for a new event at time now:
// max(now, lastAssigned+1, lastAnnounced+1).
func (k *Ticker) Assign(now Tick) Tick {
	t := max(now, k.lastAssigned+1, k.lastAnnounced+1)
	k.lastAssigned = t
	return t
}

// LastAssigned returns the last tick given to an event.
func (k *Ticker) LastAssigned() Tick { return k.lastAssigned }

// LastAnnounced returns the highest tick announced downstream.
func (k *Ticker) LastAnnounced() Tick { return k.lastAnnounced }

// Mark returns the high-water mark (persisted, or to be persisted with the
// current batch).
func (k *Ticker) Mark() Tick { return k.mark }

// Cover reports whether announcing ticks up to upto needs a higher mark,
// and if so raises it to upto+lease and returns the new mark, which the
// caller must persist (synced) before announcing.
func (k *Ticker) Cover(upto Tick) (newMark Tick, raised bool) {
	if upto <= k.mark {
		return k.mark, false
	}
	k.mark = upto + k.lease
	return k.mark, true
}

// Announced records that every tick up to t was announced.
func (k *Ticker) Announced(t Tick) {
	k.lastAnnounced = max(k.lastAnnounced, t)
}
