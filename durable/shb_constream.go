package durable

import (
	"fmt"
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// knowledge merges a knowledge message: ticks above LD go to the istream,
// events at or below LD to the catch-up streams waiting for them, and a
// lost message moves the L prefix everywhere.
func (s *SHB) knowledge(m Msg) error {
	pb, ok := s.pubs[m.Pubend]
	if !ok {
		return fmt.Errorf("knowledge for unknown pubend %q", m.Pubend)
	}
	if m.Kind != MsgLost && !s.staleFiltered(m) {
		s.learnRemote(pb, m)
	}
	switch m.Kind {
	case MsgData:
		if m.Tick <= pb.ld {
			s.offerCatchups(pb.id, m.Prev, m.Tick, m.Event)
			return nil
		}
		pb.in.AddSilence(m.Prev+1, m.Tick-1)
		pb.in.AddData(m.Tick, m.Event)
	case MsgSilence:
		if s.staleFiltered(m) {
			s.Stats.StaleIgnored++ // filtered without a registered filter
			return nil
		}
		if m.From <= pb.ld {
			s.coverAnswered(pb, Range{m.From, min(m.To, pb.ld)}) // an answer to a refetch
		}
		pb.in.AddSilence(m.From, m.To)
	case MsgLost:
		return s.lost(pb, m.Tick, m.From)
	}
	return nil
}

// staleFiltered reports whether m is a silence a router made by filtering
// before it had every registered filter: stamped before that router's
// stamp in the newest install acknowledgement.
func (s *SHB) staleFiltered(m Msg) bool {
	if !m.Filtered {
		return false
	}
	th, ok := s.stamps[m.Origin]
	return ok && older(m.Epoch, m.Version, th.Epoch, th.Version)
}

// progress advances every constream to its doubt horizon and then the
// catch-up streams that have something to do (shb_catchup_step.go).
func (s *SHB) progress() error {
	for _, p := range s.cfg.Pubends {
		if err := s.advance(s.pubs[p]); err != nil {
			return err
		}
	}
	return s.stepCatchups()
}

// advance delivers every tick from LD up to the istream's doubt horizon in
// order (rule SHB 2): each D tick is matched against the durable
// subscriptions, recorded in the PFS if any match, and delivered to the
// matching up-to-date subscribers; then LD moves. The PFS records and LD
// are in the same synced batch, which precedes the deliveries.
func (s *SHB) advance(pb *shbPubend) error {
	h := pb.in.DoubtHorizon()
	if h <= pb.ld {
		return nil
	}
	for _, seg := range pb.in.Segments(Range{pb.ld + 1, h}) {
		if seg.State == D {
			s.deliver(pb, seg.From, seg.Event)
		}
	}
	pb.ld = h
	pb.in.Advance(h)
	pb.metaDirty = true
	return nil
}

// deliver handles one D tick on the constream. The registrations' filters
// are matched once, through the index: the cost is the index's and the
// matching registrations', not one per registration or session.
func (s *SHB) deliver(pb *shbPubend, t Tick, e match.Event) {
	s.matchBuf = s.index.Match(e, s.matchBuf[:0])
	if len(s.matchBuf) == 0 {
		return
	}
	slices.Sort(s.matchBuf)
	var sids []uint64
	for _, id := range s.matchBuf {
		if d := s.bySID[uint64(id)]; t > d.start[pb.id] {
			sids = append(sids, d.sid)
		}
	}
	if len(sids) == 0 {
		return
	}
	if t > pb.pfs.lastTS {
		pb.pfs.append(t, sids)
		s.Stats.PFSRecords++
	}
	pb.tail.add(t, e)
	// A session up to date (no catch-up) is at or above its registration's
	// start (open), so every session to deliver to is one of sids'.
	for _, sid := range sids {
		d := s.bySID[sid]
		c, ok := s.conns[d.id]
		if !ok || c.sub != d {
			continue
		}
		cs := c.streams[pb.id]
		if cs.catchup != nil {
			s.keepAhead(cs, t, e)
			s.markDirty(c) // a PFS record of its own to read
			continue
		}
		if t > cs.pos {
			if s.queueFull(cs) {
				// Rule SHB 4: the subscriber is slow. The PFS holds t
				// and everything after it, so catch-up serves it from
				// pos at its own pace.
				s.startCatchup(c, cs, newCatchup(cs.pos))
				s.Stats.Overflows++
				continue
			}
			s.sendEvent(c, pb.id, t, e)
		}
	}
}

// lost moves the L prefix of a pubend: the istream and the catch-up streams
// learn it, the PFS is chopped and every released(s,p) is raised to it. A
// constream that meets L (the prefix passed LD) moves its subscribers to
// catch-up, where they get a gap (rule SHB 3) unless the ticks they miss
// held no event (silentFrom, MsgLost.From).
func (s *SHB) lost(pb *shbPubend, upto, silentFrom Tick) error {
	if upto <= pb.lost {
		return nil
	}
	pb.lost, pb.lostFrom = upto, silentFrom
	pb.metaDirty = true
	pb.in.AddLost(upto)
	if upto > pb.ld {
		for _, c := range s.sortedConns() {
			if cs := c.streams[pb.id]; cs.catchup == nil {
				s.startCatchup(c, cs, newCatchup(cs.pos))
			}
		}
		pb.ld = upto
		pb.in.Advance(upto)
	}
	s.markAllDirty()
	for _, d := range s.sortedSubs() {
		if d.released[pb.id] < upto {
			s.setReleased(d, pb.id, upto)
		}
	}
	return pb.pfs.chop(upto)
}

// nackIstream nacks the istream's Q ranges once they have waited NackDelay,
// and again with exponential backoff until answered (rule SHB 1).
func (s *SHB) nackIstream(pb *shbPubend) {
	qs := pb.in.Curiosity()
	if len(qs) == 0 {
		pb.qSince = -1
		pb.nack.reset()
		return
	}
	if pb.qSince < 0 {
		pb.qSince = s.now
	}
	if h := pb.in.DoubtHorizon(); h > pb.nackedAt {
		pb.nack.progressed(s.now, &s.cfg) // answers are coming: wait from this one
		pb.nackedAt = h
	}
	if s.now-pb.qSince < s.cfg.NackDelay || !pb.nack.due(s.now) {
		return
	}
	pb.nack.sent(s.now, &s.cfg)
	pb.nackedAt = pb.in.DoubtHorizon()
	s.Stats.StreamNacks++
	s.send(s.cfg.Upstream, Msg{Kind: MsgNack, Pubend: pb.id, Ranges: qs})
}

// report sends each pubend's release report (rule SHB 7): Tr = min(LD,
// released(s,p) of every durable subscriber, and the CT of every
// registration from a presented CT still waiting for its install
// acknowledgement), Td = LD. Messages leave after the batch that persists
// these values, so reports use persisted values.
//
// Tr only grows, except when a subscriber registers here with a CT below
// it (reconnect anywhere, or back at this SHB after it lost its disk):
// its registration holds release from that CT. Each report is stamped
// (Epoch: this incarnation's epoch, Version: a count of its reports) so
// that a pubend takes the newest report as it is, lower or not, and
// ignores a delayed older one (Pubend.report).
func (s *SHB) report() {
	born := s.stampBorn()
	for _, p := range s.cfg.Pubends {
		pb := s.pubs[p]
		tr := pb.written.ld
		for _, d := range s.sortedSubs() {
			tr = min(tr, d.reported(p))
		}
		for _, ps := range s.pending {
			if ps.ct != nil {
				tr = min(tr, ps.ct[p])
			}
		}
		s.reports++
		s.send(s.cfg.Upstream, Msg{Kind: MsgRelease, Pubend: p, Epoch: s.epoch, Version: s.reports,
			Reports: []Report{{SHB: s.cfg.Node, Tr: tr, Td: pb.written.ld}}, Born: born})
	}
}

// queueFull reports whether a session's queue on one pubend is full.
func (s *SHB) queueFull(cs *connStream) bool {
	return len(cs.unacked) >= s.cfg.SubQueue
}

// sendEvent sends an event to a session and queues it until acknowledged.
func (s *SHB) sendEvent(c *conn, p string, t Tick, e match.Event) {
	cs := c.streams[p]
	s.toSub(c, Msg{Kind: MsgEvent, Pubend: p, Tick: t, Event: e})
	cs.pos = t
	cs.unacked = append(cs.unacked, t)
}

// toSub sends a message on a subscriber's session.
func (s *SHB) toSub(c *conn, m Msg) {
	m.Sub, m.Session = c.sub.id, c.session
	switch m.Kind {
	case MsgEvent:
		s.Stats.Delivered++
		c.streams[m.Pubend].sent = m.Tick
		s.conveys(m.Pubend, m.Tick)
	case MsgSubSilence:
		c.streams[m.Pubend].sent = m.Tick
		s.conveys(m.Pubend, m.Tick)
	case MsgGap:
		s.Stats.Gaps++
		c.streams[m.Pubend].sent = m.To
		s.conveys(m.Pubend, m.To)
	case MsgStart:
		for p, t := range m.CT {
			s.conveys(p, t)
			if cs, ok := c.streams[p]; ok {
				cs.sent = t
			}
		}
	}
	s.send(c.node, m)
}

// stampBorn returns the store's Born (Msg.Born), naming the store at its
// first message upstream, so that a pubend tells a restart with an empty
// disk from one with the registry (pubend_wiped.go). It is persisted with
// the Ready that sends the message.
func (s *SHB) stampBorn() Tick {
	if s.born == 0 {
		s.born = max(s.now, 1)
		s.w.set(shbBornKey(), encodeTicks(s.born))
	}
	return s.born
}

// conveys records that a message to a subscriber conveys tick t of
// pubend p (see shbPubend.holdMeta).
func (s *SHB) conveys(p string, t Tick) {
	if pb, ok := s.pubs[p]; ok {
		pb.conveys(t)
	}
}

// reported returns released(s,p) as a report may carry it: the value
// written (holdAck), or, for one never written, the value itself.
func (d *durableSub) reported(p string) Tick {
	if t, ok := d.written[p]; ok {
		return t
	}
	return d.released[p]
}
