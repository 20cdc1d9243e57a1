package durable

import (
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// catchup is the catch-up stream of one subscriber on one pubend. It reads
// the subscriber's D ticks from the PFS (no refiltering), fetches their
// events from the constream's tail or by nacking upstream, at most
// CatchupWindow nacked at once, and delivers them in order; once it has
// conveyed everything up to LD the subscriber joins the constream.
type catchup struct {
	remote   *remote // the ticks to fetch from upstream first, or nil
	readUpto Tick    // the PFS was read up to here
	pending  []Tick  // D ticks of the subscriber above pos, ascending
	events   map[Tick]match.Event
	// nackedTo is the last tick of the window at the last full scan, and
	// nextDue the earliest time a nack of the window is due again then
	// (see nackCatchup).
	nackedTo Tick
	nextDue  Tick
	// declinedGen and declinedAt say when a cover was last declined for
	// the session (SHB.catchGen then, and the time; see mayCover).
	declinedGen uint64
	declinedAt  Tick
	// holding: the session's first nack is held since openedAt (see held).
	holding  bool
	openedAt Tick
}

func newCatchup(pos Tick) *catchup {
	return &catchup{readUpto: pos, events: map[Tick]match.Event{}}
}

// newRemoteCatchup returns a catch-up stream that fetches the ticks in
// (pos, from] from upstream before it reads the PFS above from.
func newRemoteCatchup(pos, from Tick) *catchup {
	cu := newCatchup(from)
	cu.remote = newRemote(pos, from)
	return cu
}

// stepCatchup moves one session's catch-up stream on pubend p as far as it
// can go now.
func (s *SHB) stepCatchup(c *conn, p string) error {
	cs, pb := c.streams[p], s.pubs[p]
	cu := cs.catchup
	if cu == nil {
		return nil
	}
	for {
		s.gapToLost(c, p)
		if cu.remote != nil {
			if !s.deliverRemote(c, p) {
				s.nackRemote(c, p)
				return nil
			}
			s.endRemote(c, p)
		}
		s.deliverReady(c, p)
		// The PFS is read again whenever less than a window is pending, not
		// only once everything read was delivered: every session's pending
		// ticks then reach close to LD, so the sessions' wants, counted
		// when a cover is tried (wantedIn), are what they will nack, and a
		// span most of them need is fetched whole instead of tick by tick
		// by each.
		if len(cu.pending) >= s.cfg.CatchupWindow || cu.readUpto >= pb.ld {
			if len(cu.pending) > 0 {
				return s.nackCatchup(cu, p)
			}
			s.join(c, p)
			return nil
		}
		ticks, err := pb.pfs.read(c.sub.sid, cu.readUpto, pb.ld)
		if err != nil {
			return err
		}
		cu.pending = append(cu.pending, ticks...)
		cu.readUpto = pb.ld
	}
}

// gapToLost tells the session about the L prefix above its position: a
// gap (only ticks that are L), or a silence when the pubend logged nothing
// between the position and the prefix (a release of pure silence loses
// nothing, so it must not read as a gap).
func (s *SHB) gapToLost(c *conn, p string) {
	cs, pb := c.streams[p], s.pubs[p]
	lost := pb.lost
	if cs.pos >= lost {
		return
	}
	if pb.lostFrom > 0 && cs.pos >= pb.lostFrom-1 {
		s.toSub(c, Msg{Kind: MsgSubSilence, Pubend: p, Tick: lost})
	} else {
		// From the subscriber's CT: ticks conveyed without a message
		// since then are at or below the L prefix too.
		s.toSub(c, Msg{Kind: MsgGap, Pubend: p, From: cs.sent + 1, To: lost})
	}
	cs.pos = lost
	cu := cs.catchup
	cu.readUpto = max(cu.readUpto, lost)
	i := 0
	for i < len(cu.pending) && cu.pending[i] <= lost {
		delete(cu.events, cu.pending[i])
		i++
	}
	cu.pending = cu.pending[i:]
	for t := range cu.events {
		if t <= lost {
			delete(cu.events, t) // kept ahead (keepAhead), never to be read now
		}
	}
}

// keepAhead keeps for a catch-up session an event the constream just
// matched for it, at most SubQueue events held per session: catch-up then
// finds it at hand when it reaches the tick. Without this, a session
// behind the constream by more than the shared tail (an SHB back from an
// outage, whose istream recovers the whole outage at once while its
// sessions read their PFS records) nacked every one of its ticks again,
// one by one, for events that had already passed through the SHB.
func (s *SHB) keepAhead(cs *connStream, t Tick, e match.Event) {
	cu := cs.catchup
	if t > cs.pos && len(cu.events) < s.cfg.SubQueue {
		cu.events[t] = e
	}
}

// atHand returns the event of tick t of pb for catch-up stream cu if the
// SHB holds it: kept for the session (an offer or keepAhead), in the
// constream's tail, or fetched by a nack (for any session, maybe while
// this one was away: under churn a session back from a short absence
// found the answers to its earlier nacks gone by and nacked its whole
// window again, every time it came back, and the repeated answers
// crowded the link the live knowledge comes by).
func (s *SHB) atHand(pb *shbPubend, cu *catchup, t Tick) (match.Event, bool) {
	if e, ok := cu.events[t]; ok {
		return e, true
	}
	if e, ok := pb.tail.get(t); ok {
		return e, true
	}
	return pb.fetched.get(t)
}

// deliverReady delivers the pending ticks whose events are at hand, in
// order, re-applying the subscriber's filter, while the session's queue
// has room.
func (s *SHB) deliverReady(c *conn, p string) {
	cs, pb := c.streams[p], s.pubs[p]
	cu := cs.catchup
	for len(cu.pending) > 0 {
		t := cu.pending[0]
		e, ok := s.atHand(pb, cu, t)
		if !ok {
			return
		}
		if c.sub.filter.Matches(e) {
			if s.queueFull(cs) {
				return // paused until the subscriber acknowledges
			}
			s.sendEvent(c, p, t, e)
		}
		cs.pos = t
		delete(cu.events, t)
		cu.pending = cu.pending[1:]
	}
}

// nackCatchup nacks the first CatchupWindow pending ticks whose event is
// not at hand. A tick already nacked (by any session) keeps its own retry
// state, the pubend's (shbPubend.fetch), shared by every catch-up
// session: sessions that want the same tick (subscribers with the same or
// overlapping filters, back at once) nack it once, and its answer goes to
// all of them (offerCatchups); each is nacked again with exponential
// backoff until it comes. Of the ticks not nacked yet, those in a live
// cover (a span already nacked whole for every session) wait for it; the
// first one outside starts a new cover when the catch-up sessions want
// enough of the span (tryCover); the others are nacked one by one. A
// session just back holds its first nack while other sessions are coming
// back (held), so that they are counted in one cover. When every tick of
// the window was nacked already (the window did not slide past nackedTo)
// and no nack is due again before nextDue, there is nothing to do and it
// returns at once; progress steps the session again at nextDue (its
// wake) or when an input changes it (shb_catchup_step.go).
func (s *SHB) nackCatchup(cu *catchup, p string) error {
	pb := s.pubs[p]
	window := cu.pending[:min(len(cu.pending), s.cfg.CatchupWindow)]
	if len(window) == 0 || (s.now < cu.nextDue && window[len(window)-1] <= cu.nackedTo) || s.held(cu) {
		return nil
	}
	var rs []Range
	tried := false
	cu.nextDue = MaxTick
	for i, t := range window {
		if _, ok := s.atHand(pb, cu, t); ok {
			continue
		}
		r := pb.fetch[t]
		if r == nil {
			if until, ok := s.covered(pb, t); ok {
				cu.nextDue = min(cu.nextDue, until)
				continue
			}
			if !tried && s.mayCover(cu) {
				tried = true
				ok, err := s.tryCover(cu, p, i)
				if err != nil {
					return err
				}
				if ok {
					cu.nextDue = min(cu.nextDue, s.now+pb.covers[len(pb.covers)-1].life)
					continue
				}
			}
			r = &retry{}
			pb.fetch[t] = r
		}
		if r.due(s.now) {
			r.sent(s.now, &s.cfg)
			rs = append(rs, Range{t, t})
		}
		cu.nextDue = min(cu.nextDue, r.last+r.wait)
	}
	cu.nackedTo = window[len(window)-1]
	if len(rs) == 0 {
		return nil
	}
	s.Stats.CatchupNack += len(rs)
	s.send(s.cfg.Upstream, Msg{Kind: MsgNack, Pubend: p, Ranges: mergeRanges(rs), Refetch: true})
	return nil
}

// held reports whether cu's first nack is still held: while sessions keep
// coming back (the last opened less than NackDelay ago), for at most
// NackRetry after cu's own. Sessions back together from one outage (an
// SHB restart, a network partition healed) then try their covers once
// all of them are catching up, so the first ones back do not nack their
// ticks one by one, sparse among the others', and a later cover fetch the
// rest around them.
func (s *SHB) held(cu *catchup) bool {
	if !cu.holding {
		return false
	}
	if s.now-s.lastOpen < s.cfg.NackDelay && s.now-cu.openedAt < s.cfg.NackRetry {
		return true
	}
	cu.holding = false
	return false
}

// join hands a caught-up session to the constream: everything up to LD has
// been conveyed, and the constream delivers only ticks above LD, so no tick
// is skipped or delivered twice at the switch.
func (s *SHB) join(c *conn, p string) {
	cs, ld := c.streams[p], s.pubs[p].ld
	cs.catchup = nil
	if cs.sent < ld {
		s.toSub(c, Msg{Kind: MsgSubSilence, Pubend: p, Tick: ld})
		cs.pos = max(cs.pos, ld)
	}
}

// offerCatchups gives an event fetched by a nack (a D tick at or below
// LD, the silence before it since prev) to every catch-up stream of
// pubend p waiting for it.
func (s *SHB) offerCatchups(p string, prev, t Tick, e match.Event) {
	pb := s.pubs[p]
	delete(pb.fetch, t)
	pb.fetched.add(t, e)
	pb.coverStreak = 0
	s.coverAnswered(pb, Range{min(prev+1, t), t})
	if s.stepAll {
		for _, c := range s.catchingConns() {
			s.offerCatchup(c, p, t, e)
		}
		return
	}
	if len(s.catching) == 0 {
		return
	}
	// The sessions waiting for t are among those whose filter matches e:
	// t is in a session's pending only if its PFS record lists the
	// session's registration, written when the constream matched the
	// same event against the same filter.
	s.matchBuf = s.index.Match(e, s.matchBuf[:0])
	for _, id := range s.matchBuf {
		d := s.bySID[uint64(id)]
		if c, ok := s.conns[d.id]; ok && c.sub == d {
			s.offerCatchup(c, p, t, e)
		}
	}
}

// offerCatchup gives session c the event of tick t of pubend p if its
// catch-up stream waits for it.
func (s *SHB) offerCatchup(c *conn, p string, t Tick, e match.Event) {
	cu := c.streams[p].catchup
	if cu == nil {
		return
	}
	if _, found := slices.BinarySearch(cu.pending, t); found {
		cu.events[t] = e
		s.markDirty(c)
	}
}

// pruneFetches forgets the shared nack state of pubend p's catch-up ticks
// at or below the L prefix (they are answered by the gap) and, when no
// session is catching up on p any more, all of it.
func (s *SHB) pruneFetches(pb *shbPubend) {
	s.dropExpiredCovers(pb)
	if len(pb.fetch) == 0 && len(pb.covers) == 0 {
		return
	}
	for _, c := range s.catchingConns() {
		if c.streams[pb.id].catchup != nil {
			for t := range pb.fetch {
				if t <= pb.lost {
					delete(pb.fetch, t)
				}
			}
			return
		}
	}
	clear(pb.fetch)
	pb.covers = nil
}
