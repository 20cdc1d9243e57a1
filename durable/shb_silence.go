package durable

// idleSilences sends silence(p, LD) to up-to-date subscribers that were
// sent nothing on p for a whole IdleSilence period, so their CT keeps up
// (rule SHB 5). A subscriber that was sent an event (or anything else)
// since its previous due time needs none: its CT moved with that message.
// Each session is due once per IdleSilence at its own phase (from its
// subscription id), so with many subscribers the silences are spread over
// the period instead of leaving in one burst that delays the events
// queued behind it.
//
// With many subscribers that each match now and then, a silence per
// subscriber and period would be as many messages as the events
// themselves (each its own frame on the subscriber's connection); sent
// only to the idle ones, the silences cost nothing while events flow, and
// the CT of every session still lags LD by at most about two periods.
func (s *SHB) idleSilences() {
	for _, c := range s.sortedConns() {
		if c.nextSilence == 0 {
			c.nextSilence = s.now + Tick(phaseOf(c.sub.id)%uint64(s.cfg.IdleSilence))
			for _, cs := range c.streams {
				cs.sentAtDue = cs.sent
			}
		}
		if s.now < c.nextSilence {
			continue
		}
		c.nextSilence = max(c.nextSilence+s.cfg.IdleSilence, s.now)
		for _, p := range s.cfg.Pubends {
			cs, ld := c.streams[p], s.pubs[p].written.ld
			busy := cs.sent != cs.sentAtDue
			if cs.catchup == nil && cs.sent < ld && !busy {
				s.toSub(c, Msg{Kind: MsgSubSilence, Pubend: p, Tick: ld})
				cs.pos = max(cs.pos, ld)
			}
			cs.sentAtDue = cs.sent
		}
	}
}

// phaseOf hashes a subscription id (FNV-1a), for its silence phase.
func phaseOf(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * 1099511628211
	}
	return h
}
