package durable

import "slices"

// A cover is a range of ticks one catch-up nack asked for whole, on behalf
// of every catch-up session of the pubend: when the sessions back at once
// need most of the PFS records in a span (subscribers with disjoint
// filters back from the same outage), one ranged nack fetches the span
// from one store scan at the pubend and its answer serves them all
// (offerCatchups), instead of each session nacking its own ticks one by
// one and sharing nothing. Ticks inside a live cover are not nacked again;
// a cover lives while its answer flows (each answered tick inside it
// renews it) and expires coverLife after the last, when the ticks still
// missing fall back to nacks of their own, with backoff.
type cover struct {
	r  Range
	at Tick // when the cover was sent or last renewed by an answer
}

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

// live reports whether c has not expired.
func (s *SHB) live(c cover) bool { return s.now-c.at < s.coverLife() }

// covered reports whether a live cover of pb holds t, and if so when it
// expires.
func (s *SHB) covered(pb *shbPubend, t Tick) (Tick, bool) {
	for _, c := range pb.covers {
		if c.r.Contains(t) && s.live(c) {
			return c.at + s.coverLife(), true
		}
	}
	return 0, false
}

// renewCover keeps alive the covers holding t, a tick just answered.
func (s *SHB) renewCover(pb *shbPubend, t Tick) {
	for i := range pb.covers {
		if c := &pb.covers[i]; c.r.Contains(t) {
			c.at = s.now
		}
	}
}

// tryCover nacks, as one range, the span from cu.pending[i] (a tick not at
// hand and not covered) through the next CatchupWindow pending ticks of
// the session (up to the next live cover), if the pubend's catch-up sessions want enough of the span's
// PFS records (coverDensity). It reports whether it did.
func (s *SHB) tryCover(cu *catchup, p string, i int) (bool, error) {
	pb := s.pubs[p]
	r := Range{cu.pending[i], cu.pending[min(len(cu.pending), i+s.cfg.CatchupWindow)-1]}
	for _, c := range pb.covers {
		if r.Contains(c.r.From) && c.r.From != r.From && s.live(c) {
			r.To = c.r.From - 1 // asked for already
		}
	}
	if r.From == r.To {
		return false, nil
	}
	records, err := pb.pfs.countIn(r)
	if err != nil {
		return false, err
	}
	if coverDensity*s.wantedIn(p, r) < records {
		return false, nil
	}
	s.dropExpiredCovers(pb)
	pb.covers = append(pb.covers, cover{r: r, at: s.now})
	s.Stats.CatchupCovers++
	s.send(s.cfg.Upstream, Msg{Kind: MsgNack, Pubend: p, Ranges: []Range{r}})
	return true, nil
}

// wantedIn counts the pending ticks of pubend p's catch-up sessions in r:
// a binary search per session, done once per cover tried.
func (s *SHB) wantedIn(p string, r Range) int {
	n := 0
	for _, c := range s.catchingConns() {
		cu := c.streams[p].catchup
		if cu == nil {
			continue
		}
		lo, _ := slices.BinarySearch(cu.pending, r.From)
		hi, _ := slices.BinarySearch(cu.pending, r.To+1)
		n += hi - lo
	}
	return n
}

// dropExpiredCovers forgets the covers that expired or lie at or below the
// L prefix.
func (s *SHB) dropExpiredCovers(pb *shbPubend) {
	pb.covers = slices.DeleteFunc(pb.covers, func(c cover) bool {
		return !s.live(c) || c.r.To <= pb.lost
	})
}
