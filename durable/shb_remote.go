package durable

// remote is the first phase of a catch-up stream for a subscriber whose CT
// is below where its registration here starts (it was registered at another
// SHB, or here by such a reconnection): this SHB's PFS says nothing about
// the ticks in (CT, upto], so their knowledge is fetched from upstream (the
// intermediate caches and the PHB's log) by nacks, merged into a private
// stream and filtered here with the subscriber's filter (reconnect
// anywhere).
type remote struct {
	in       *Stream
	upto     Tick
	nack     retry
	nackedAt Tick // the session's position when it last nacked or moved
}

func newRemote(pos, upto Tick) *remote {
	return &remote{in: NewStream(pos), upto: upto}
}

// learnRemote merges a knowledge message (data or a silence not stale) into the
// remote phases of pubend pb that still need its ticks. Only the sessions
// in a remote phase are visited (pb.remotes), each on its own: the order
// does not matter.
func (s *SHB) learnRemote(pb *shbPubend, m Msg) {
	for c := range pb.remotes {
		rm := c.streams[pb.id].catchup.remote
		switch m.Kind {
		case MsgData:
			if m.Tick <= rm.upto {
				rm.in.AddSilence(m.Prev+1, m.Tick-1)
				rm.in.AddData(m.Tick, m.Event)
			} else {
				rm.in.AddSilence(m.Prev+1, rm.upto)
			}
		case MsgSilence:
			rm.in.AddSilence(m.From, min(m.To, rm.upto))
		}
	}
}

// deliverRemote delivers the known prefix of a session's remote phase in
// tick order, applying the subscriber's filter, while its queue has room,
// and reports whether the phase is over (everything up to upto conveyed).
func (s *SHB) deliverRemote(c *conn, p string) bool {
	cs := c.streams[p]
	rm := cs.catchup.remote
	rm.in.AddLost(s.pubs[p].lost)
	h := min(rm.in.DoubtHorizon(), rm.upto)
	for _, seg := range rm.in.Segments(Range{cs.pos + 1, h}) {
		switch seg.State {
		case D:
			if c.sub.filter.Matches(seg.Event) {
				if s.queueFull(cs) {
					rm.in.Advance(cs.pos)
					return false // paused until the subscriber acknowledges
				}
				s.sendEvent(c, p, seg.From, seg.Event)
			}
			cs.pos = seg.From
		case S:
			cs.pos = seg.To
		}
	}
	rm.in.Advance(cs.pos)
	return cs.pos >= rm.upto
}

// nackRemote asks upstream for the unknown ticks of a remote phase: at most
// CatchupWindow ranges, again with exponential backoff until answered.
func (s *SHB) nackRemote(c *conn, p string) {
	cs := c.streams[p]
	rm := cs.catchup.remote
	if cs.pos > rm.nackedAt {
		rm.nack.progressed(s.now, &s.cfg) // answers are coming: wait from this one
		rm.nackedAt = cs.pos
	}
	if !rm.nack.due(s.now) {
		return
	}
	qs := rm.in.QRanges(Range{cs.pos + 1, rm.upto})
	if len(qs) == 0 {
		return
	}
	qs = qs[:min(len(qs), s.cfg.CatchupWindow)]
	rm.nack.sent(s.now, &s.cfg)
	rm.nackedAt = cs.pos
	s.Stats.RemoteNacks += len(qs)
	s.send(s.cfg.Upstream, Msg{Kind: MsgNack, Pubend: p, Ranges: qs, Refetch: true})
}
