package durable

import "slices"

// A member SHB that restarts with an empty disk has lost its registry:
// the subscribers it served come back with their CTs and are registered
// again as if reconnecting from elsewhere (rule SHB 9), which holds
// release only from then on. Until they are back, the new store reports
// as if it had no subscriber, and a pubend that took those reports would
// release what they still need. So a pubend tells an SHB's stores apart
// by their Born (Msg.Born, on installs and reports), and when a member's Born grows it keeps
// the previous store's last report as a hold (wiped): release stays at
// or below it for PubendConfig.WipeGrace after the new store's first
// report, time for the old subscribers to come back; the new store's
// reports count as a new member's (nothing more is released until it
// reported). A subscriber back within the grace misses nothing (every
// tick above the hold is still in the log, and its CT is at or above
// the hold); one back later gets a gap for what was released after the
// grace. A report of an older store (delayed in the network) is ignored:
// the hold has its values. The new store's reports made before its old
// subscribers are back are above their CTs; each one back is registered
// from its CT, which lowers the store's Tr, and the pubend takes the
// newest stamped report as it is (not the maximum), so when the grace ends
// release stops at the CTs of the subscribers that came back.

// wipedHold is the last report of a member SHB's previous store, held
// until since + WipeGrace.
type wipedHold struct {
	Tr, Td Tick
	since  Tick
}

// bornOf applies the Born of an install or report from member shb and
// reports whether the message is to be taken: not from a store older than
// the one recorded.
func (p *Pubend) bornOf(now Tick, shb string, born Tick) bool {
	if born == 0 {
		return true // an SHB that does not say: one store for ever
	}
	old := p.born[shb]
	switch {
	case born < old:
		return false
	case born == old:
		return true
	}
	p.born[shb] = born
	p.w.set(phbBornKey(p.cfg.ID, shb), encodeTicks(born))
	if old == 0 {
		return true // the first store this pubend hears of
	}
	// The previous store held release at its last report, or, if none
	// came (its installs did), where release stands.
	h := wipedHold{Tr: p.lost, Td: p.lost, since: now}
	if prev, ok := p.reports[shb]; ok {
		h.Tr, h.Td = prev.Tr, prev.Td
	}
	if w, ok := p.wiped[shb]; ok {
		// Wiped again before the grace ended: hold the older store's
		// values, from now.
		h.Tr, h.Td = min(h.Tr, w.Tr), min(h.Td, w.Td)
	}
	p.wiped[shb] = h
	p.w.set(phbWipedKey(p.cfg.ID, shb), encodeTicks(h.Tr, h.Td, h.since))
	delete(p.reports, shb)
	delete(p.reportsDirty, shb)
	p.w.del(phbReportKey(p.cfg.ID, shb))
	delete(p.stamps, shb) // the new store counts its own
	p.w.del(phbStampKey(p.cfg.ID, shb))
	p.Stats.Wipes++
	return true
}

// endWipeGrace lets release go past the holds whose grace has ended: an
// explicit early release for the subscribers of a wiped SHB that did not
// come back in time (they get a gap).
func (p *Pubend) endWipeGrace(now Tick) {
	for _, shb := range slices.Sorted(mapKeys(p.wiped)) {
		if h := p.wiped[shb]; p.cfg.WipeGrace > 0 && now-h.since > p.cfg.WipeGrace {
			delete(p.wiped, shb)
			p.w.del(phbWipedKey(p.cfg.ID, shb))
		}
	}
}

// Wiped returns, per member SHB that restarted with an empty disk and
// whose grace has not ended, the release point its previous store held.
func (p *Pubend) Wiped() map[string]Tick {
	out := map[string]Tick{}
	for shb, h := range p.wiped {
		out[shb] = h.Tr
	}
	return out
}

// recoverWiped loads the Borns and holds.
func (p *Pubend) recoverWiped() error {
	if err := p.scanTable('b', 1, func(k string, v []Tick) { p.born[k] = v[0] }); err != nil {
		return err
	}
	return p.scanTable('g', 3, func(k string, v []Tick) {
		p.wiped[k] = wipedHold{Tr: v[0], Td: v[1], since: v[2]}
	})
}
