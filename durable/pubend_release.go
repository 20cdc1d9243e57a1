package durable

// report records SHB release reports (rule PHB 6). An SHB's persisted
// values only grow, so the larger of two reports is the newer; a delayed
// or duplicated report changes nothing. Reports from SHBs not configured
// are ignored (with LearnSHBs, such an SHB becomes a member); a dropped
// SHB that reports is taken back.
func (p *Pubend) report(now Tick, rs []Report, born Tick) {
	for _, r := range rs {
		if p.cfg.LearnSHBs && r.SHB != "" {
			p.AddSHB(r.SHB)
		}
		if !contains(p.cfg.SHBs, r.SHB) || !p.bornOf(now, r.SHB, born) {
			continue
		}
		p.heard[r.SHB] = now
		if p.dropped[r.SHB] {
			delete(p.dropped, r.SHB)
			p.w.del(phbDropKey(p.cfg.ID, r.SHB))
		}
		old, ok := p.reports[r.SHB]
		nr := Report{SHB: r.SHB, Tr: max(old.Tr, r.Tr), Td: max(old.Td, r.Td)}
		if !ok || nr != old {
			p.reports[r.SHB] = nr
			p.reportsDirty[r.SHB] = true
		}
	}
}

// releasePoint returns how far the L prefix may move at time now: up to the
// minimum Tr of all SHBs, and with early release any tick at or below the
// minimum Td older than MaxRetain. Until every SHB has reported, nothing.
// Dropped SHBs do not count; a wiped one's previous store holds too.
func (p *Pubend) releasePoint(now Tick) Tick {
	if len(p.cfg.SHBs) == 0 {
		return p.lost
	}
	tr, td := MaxTick, MaxTick
	for _, shb := range p.cfg.SHBs {
		if p.dropped[shb] {
			continue
		}
		r, ok := p.reports[shb]
		if !ok {
			return p.lost
		}
		tr, td = min(tr, r.Tr), min(td, r.Td)
		if h, ok := p.wiped[shb]; ok {
			tr, td = min(tr, h.Tr), min(td, h.Td)
		}
	}
	upto := tr
	if p.cfg.MaxRetain > 0 {
		upto = max(upto, min(td, now-p.cfg.MaxRetain-1))
	}
	return min(upto, p.ticker.LastAnnounced())
}

// release moves the L prefix, deletes released log entries and announces
// lost downstream; the announcement leaves after the new prefix is synced.
func (p *Pubend) release(now Tick) {
	upto := p.releasePoint(now)
	if upto <= p.lost {
		return
	}
	p.lost = upto
	p.metaDirty = true
	p.w.deleteRange(phbLogKey(p.cfg.ID, 0), phbLogKey(p.cfg.ID, upto+1))
	p.broadcast(Msg{Kind: MsgLost, Tick: upto})
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// dropAbsent drops the SHBs that sent no report for DropAfter (rule PHB 6):
// an explicit early-release step, persisted with the release it allows.
// The absence is timed from the SHB's last report, or from the first timer
// of this incarnation of the pubend (so a restart restarts the clock).
func (p *Pubend) dropAbsent(now Tick) {
	if p.cfg.DropAfter <= 0 {
		return
	}
	for _, shb := range p.cfg.SHBs {
		last, ok := p.heard[shb]
		if !ok {
			p.heard[shb] = now
			continue
		}
		if !p.dropped[shb] && now-last > p.cfg.DropAfter {
			p.dropped[shb] = true
			p.w.set(phbDropKey(p.cfg.ID, shb), encodeTicks(now))
			p.Stats.SHBDrops++
		}
	}
}

// Dropped returns the SHBs dropped for their absence, sorted.
func (p *Pubend) Dropped() []string {
	var out []string
	for _, shb := range p.cfg.SHBs {
		if p.dropped[shb] {
			out = append(out, shb)
		}
	}
	return out
}
