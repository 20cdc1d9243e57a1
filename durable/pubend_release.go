package durable

import (
	"fmt"
	"slices"
)

// report records SHB release reports (rule PHB 6). A stamped report
// (MsgRelease Epoch and Version) newer than the SHB's last is taken as it
// is, and an older or repeated one changes nothing: an SHB's Tr goes down
// when a subscriber registers there with a lower CT (reconnect anywhere,
// or back at an SHB that lost its disk), and that registration must hold
// release from then on. Unstamped reports (an older SHB) are merged by
// their maximum, as its persisted values only grow. Reports from SHBs not
// configured are ignored (with LearnSHBs, such an SHB becomes a member); a
// dropped SHB that reports is taken back.
//
// A report taken is written with the pubend's next batch that has writes
// of its own or of a broker sharing its store (the high-water mark is
// renewed every Lease while silence is announced), or after ProgressHold:
// not in a sync of its own (see writeHeld for why that is safe).
func (p *Pubend) report(now Tick, m Msg, born Tick) {
	st := reportStamp{epoch: m.Epoch, version: m.Version}
	for _, r := range m.Reports {
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
		if st.epoch != 0 {
			if last, seen := p.stamps[r.SHB]; ok && seen && !last.before(st) {
				continue // delayed or repeated
			}
			p.stamps[r.SHB] = st
			p.reportsDirty[r.SHB] = true // the stamp, with the report
			nr = Report{SHB: r.SHB, Tr: r.Tr, Td: max(old.Td, r.Td)}
		}
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
// lost downstream. A release that passes a logged tick is written with
// the log deletion, and its announcement leaves after both are synced. A
// release over silent ticks only (nothing logged in them) is held back
// like the reports (see writeHeld): its announcement may leave before
// it is written.
func (p *Pubend) release(now Tick) {
	upto := p.releasePoint(now)
	if upto <= p.lost {
		return
	}
	last, err := p.lastLogged(upto)
	if err != nil {
		// The log could not be read: say nothing of the ticks' content.
		last = upto
	}
	switch {
	case last > p.lost:
		p.lostFrom = last + 1
	case p.lostFrom == 0:
		p.lostFrom = p.lost + 1
	}
	if last > p.lost {
		p.metaDirty = true
		p.w.deleteRange(phbLogKey(p.cfg.ID, 0), phbLogKey(p.cfg.ID, upto+1))
	} else {
		p.lostHeld = true
	}
	p.lost = upto
	p.broadcast(p.lostMsg())
}

// lostMsg announces the L prefix with the start of its silent end.
func (p *Pubend) lostMsg() Msg {
	return Msg{Kind: MsgLost, Tick: p.lost, From: p.lostFrom}
}

// lastLogged returns the highest tick in (lost, upto] that holds an
// event (0: none), and forgets the ticks of logged it passes. Only ticks
// an earlier incarnation logged (at or below recovered) are looked up in
// the log.
func (p *Pubend) lastLogged(upto Tick) (Tick, error) {
	i, _ := slices.BinarySearch(p.logged, upto+1)
	if i > 0 {
		last := p.logged[i-1]
		p.logged = p.logged[i:]
		return last, nil
	}
	if p.lost >= p.recovered {
		return 0, nil
	}
	var last Tick
	var derr error
	err := p.w.store.Scan(phbLogKey(p.cfg.ID, p.lost+1), phbLogKey(p.cfg.ID, min(upto, p.recovered)+1), func(k, _ []byte) bool {
		t, err := keyNumOf(k)
		last, derr = Tick(t), err
		return err == nil
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return 0, fmt.Errorf("pubend %s: read log: %w", p.cfg.ID, err)
	}
	return last, nil
}

// recoverLostFrom reads lostFrom. A store without it (written before
// lostFrom existed) knows nothing of the ticks at or below lost; a new
// store logged nothing yet, so its L prefix is silent from tick 1.
func (p *Pubend) recoverLostFrom(store Store) error {
	v, ok, err := store.Get(phbLostFromKey(p.cfg.ID))
	switch {
	case err != nil:
		return err
	case ok:
		ts, err := decodeTicks(v, 1)
		if err != nil {
			return fmt.Errorf("lost-from: %w", err)
		}
		p.lostFrom = ts[0]
	case p.lost > 0:
		p.lostFrom = p.lost + 1
	default:
		p.lostFrom = 1
	}
	return nil
}

// reportStamp orders the release reports of one SHB store: its
// incarnation, then its count of reports.
type reportStamp struct {
	epoch, version uint64
}

func (a reportStamp) before(b reportStamp) bool {
	return a.epoch < b.epoch || (a.epoch == b.epoch && a.version < b.version)
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
