package durable

import "slices"

// A cover is a range of ticks one catch-up nack asked for whole, on behalf
// of every catch-up session of the pubend: when the sessions back at once
// need most of the PFS records in a span (subscribers with disjoint
// filters back from the same outage), one ranged nack fetches the span
// from one store scan at the pubend and its answer serves them all
// (offerCatchups), instead of each session nacking its own ticks one by
// one and sharing nothing. Ticks inside a live cover are not nacked again;
// a cover holds the ticks its answer has not reached yet, lives while
// the answers to the SHB's refetches flow (each renews every live cover:
// coverAnswered), is forgotten once its answer reaches its last tick,
// and otherwise expires coverLife after the last answer, when the ticks
// still missing fall back to nacks of their own, with backoff.
type cover struct {
	r  Range
	rs []Range // the ranges nacked: r less the ticks in flight on nacks of their own
	// reached is how far the answer has come, in order (r.From-1:
	// nothing yet): the cover holds only the ticks above it.
	reached Tick
	at      Tick // when the cover was sent or last renewed by an answer
	life    Tick // how long after at it expires (coverLifeFor)
}

// answered moves c.reached over span, knowledge just received, when span
// follows on from where the answer stands: the pubend answers each of
// c's ranges from its first tick up, in order, so only knowledge that
// continues the answer is its progress (a one-tick answer of a later
// tick, to a nack of its own, is not).
func (c *cover) answered(span Range) {
	for _, x := range c.rs {
		if x.To <= c.reached {
			continue
		}
		next := max(x.From, c.reached+1)
		if !span.Contains(next) {
			return
		}
		if c.reached = min(span.To, x.To); c.reached < x.To {
			return
		}
	}
}

// rest returns the ticks c still holds: those its answer has not reached.
func (c *cover) rest() Range { return Range{max(c.r.From, c.reached+1), c.r.To} }

// coverDensity is how many of a span's PFS records must be wanted by the
// pubend's catch-up sessions for the span to be fetched whole: at least
// one in coverDensity. A sparse span (one subscriber behind among many up
// to date) is nacked tick by tick, so a range never fetches mostly events
// no session here wants.
const coverDensity = 2

// coverLife is how long a cover lives after it was sent or last renewed:
// twice a tick's first retry wait, not the backoff's ceiling, so an answer
// lost on the way is asked for again within a few round trips.
func (s *SHB) coverLife() Tick { return 2 * s.cfg.NackRetry }

// coverLifeFor returns the life of a cover sent after streak others with
// no answer to any refetch of the pubend in between: coverLife doubled
// per cover of the streak, up to NackRetryMax, as a tick's own retries
// back off. On a path slower than a cover's life (a driver holding its
// inputs and outputs for longer) every expired cover was otherwise asked
// for again whole at once, the pubend answers each refetch in full, and
// the repeats outgrew the answers.
func (s *SHB) coverLifeFor(streak int) Tick {
	return max(s.coverLife(), backoffWait(streak, s.coverLife(), s.cfg.NackRetryMax, 0, nil))
}

// live reports whether c has not expired.
func (s *SHB) live(c cover) bool { return s.now-c.at < c.life }

// covered reports whether a live cover of pb holds t, and if so when it
// expires.
func (s *SHB) covered(pb *shbPubend, t Tick) (Tick, bool) {
	for _, c := range pb.covers {
		if c.rest().Contains(t) && s.live(c) {
			return c.at + c.life, true
		}
	}
	return 0, false
}

// coverAnswered notes an answer to a refetch of pubend pb, knowledge of
// span (ticks at or below LD), in its live covers:
//
//   - a cover holds only the ticks its answer has not reached yet
//     (cover.answered): a session that wants a tick the answer has
//     passed (it was away while the answer went by, or had not read that
//     far) nacks that tick itself. Once the answer reaches the cover's
//     last tick the cover is forgotten. A cover used to hold every tick
//     of its span until it expired, and every answer renewed it, so
//     under churn (sessions away and back all the time, answers flowing
//     without end) a session back after its cover's answer went by
//     waited for ever and never asked again.
//   - every live cover is renewed: the pubend answers an SHB's refetches
//     in one queue, so while the answer of one cover flows the covers
//     queued after it wait their turn, however long it takes (renewing
//     only the cover holding the tick let the others expire on a path
//     slower than a cover's life, and each expired one was asked for
//     again while its answer was still to come). A cover lost on the way
//     is asked for again coverLife after the answers stop.
func (s *SHB) coverAnswered(pb *shbPubend, span Range) {
	if len(pb.covers) == 0 {
		return
	}
	kept := pb.covers[:0]
	for _, c := range pb.covers {
		if s.live(c) {
			if c.answered(span); c.reached >= c.r.To {
				continue // complete
			}
			c.at = s.now
		}
		kept = append(kept, c)
	}
	clear(pb.covers[len(kept):])
	pb.covers = kept
}

// tryCover nacks the span from cu.pending[i] (a tick not at hand, not
// covered and not in flight) through the next CatchupWindow pending ticks
// of the session (up to the next live cover) for every catch-up session,
// if they want enough of the span's PFS records (coverDensity). Ticks of
// the span already in flight on nacks of their own (pb.fetch) are left
// out of the nack, so no tick is asked for twice. It reports whether it
// nacked; a declined span is not tried again for the session until
// another session starts catching up or NackRetry has passed (mayCover).
func (s *SHB) tryCover(cu *catchup, p string, i int) (bool, error) {
	pb := s.pubs[p]
	r := Range{cu.pending[i], cu.pending[min(len(cu.pending), i+s.cfg.CatchupWindow)-1]}
	for _, c := range pb.covers {
		if from := c.rest().From; r.Contains(from) && from != r.From && s.live(c) {
			r.To = from - 1 // asked for already
		}
	}
	if r.From == r.To {
		return false, nil
	}
	records, err := pb.pfs.countIn(r)
	if err != nil {
		return false, err
	}
	wanted, inFlight := s.wantedIn(pb, r)
	if coverDensity*wanted < records {
		cu.declinedGen, cu.declinedAt = s.catchGen, s.now
		s.Stats.CoverDeclines++
		return false, nil
	}
	rs := s.holed(r, inFlight)
	if len(rs) == 0 {
		return false, nil // every tick of the span is in flight: nothing to cover
	}
	r.To = rs[len(rs)-1].To
	s.dropExpiredCovers(pb)
	pb.covers = append(pb.covers, cover{r: r, rs: rs, reached: r.From - 1, at: s.now, life: s.coverLifeFor(pb.coverStreak)})
	pb.coverStreak++
	s.Stats.CatchupCovers++
	s.send(s.cfg.Upstream, Msg{Kind: MsgNack, Pubend: p, Ranges: rs, Refetch: true})
	return true, nil
}

// mayCover reports whether a cover may be tried for cu: not while a span
// of it was declined and nothing has changed since, so a session whose
// window slides past single ticks does not pay a declined cover (two
// binary searches over the PFS, one over each catch-up session) per tick.
func (s *SHB) mayCover(cu *catchup) bool {
	return cu.declinedGen != s.catchGen || s.now-cu.declinedAt >= s.cfg.NackRetry
}

// holed returns r less the ticks in inFlight (ascending, inside r): the
// ranges of a cover. At most CatchupWindow holes are cut; past them the
// span ends before the next hole.
func (s *SHB) holed(r Range, inFlight []Tick) []Range {
	var rs []Range
	from := r.From
	for n, t := range inFlight {
		if n == s.cfg.CatchupWindow {
			break
		}
		if t > from {
			rs = append(rs, Range{from, t - 1})
		}
		from = t + 1
	}
	if len(inFlight) <= s.cfg.CatchupWindow && from <= r.To {
		rs = append(rs, Range{from, r.To})
	}
	return rs
}

// wantedIn counts the pending ticks of pb's catch-up sessions in r (a
// binary search per session, done once per cover tried) and returns those
// already in flight on nacks of their own, ascending.
func (s *SHB) wantedIn(pb *shbPubend, r Range) (int, []Tick) {
	n := 0
	var inFlight []Tick
	for _, c := range s.catchingConns() {
		cu := c.streams[pb.id].catchup
		if cu == nil {
			continue
		}
		lo, _ := slices.BinarySearch(cu.pending, r.From)
		hi, _ := slices.BinarySearch(cu.pending, r.To+1)
		n += hi - lo
		if len(pb.fetch) == 0 {
			continue
		}
		for _, t := range cu.pending[lo:hi] {
			if pb.fetch[t] != nil {
				inFlight = append(inFlight, t)
			}
		}
	}
	slices.Sort(inFlight)
	return n, slices.Compact(inFlight)
}

// dropExpiredCovers forgets the covers that expired or lie at or below the
// L prefix.
func (s *SHB) dropExpiredCovers(pb *shbPubend) {
	pb.covers = slices.DeleteFunc(pb.covers, func(c cover) bool {
		return !s.live(c) || c.r.To <= pb.lost
	})
}
