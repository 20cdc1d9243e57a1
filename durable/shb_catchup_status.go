package durable

// CatchupStatus is one session's catch-up stream on one pubend, as the
// status pages show it: where a catch-up that stopped delivering waits.
type CatchupStatus struct {
	Sub    string `json:"sub"`
	Pubend string `json:"pubend"`
	// Pos is the last tick conveyed to the subscriber, Unacked the events
	// sent and not acknowledged (a full queue pauses the stream).
	Pos     Tick `json:"pos"`
	Unacked int  `json:"unacked"`
	// Pending is how many of its D ticks it read from the PFS and has not
	// delivered, First the first of them (0: none), AtHand whether that
	// one's event is here (kept or in the tail).
	Pending int  `json:"pending"`
	First   Tick `json:"first,omitempty"`
	AtHand  bool `json:"at_hand,omitempty"`
	// Nacks is how often First was nacked on its own since its last
	// answer (0: not nacked on its own), NextNack when it may be again,
	// CoveredUntil when a live cover holding it expires (0: none).
	Nacks        int  `json:"nacks,omitempty"`
	NextNack     Tick `json:"next_nack,omitempty"`
	CoveredUntil Tick `json:"covered_until,omitempty"`
	// Remote: still fetching, from upstream, ticks the PFS does not cover;
	// Holding: its first nack is held while others come back; WakeAt: when
	// progress steps it next without an input (0 or MaxTick: none).
	Remote  bool `json:"remote,omitempty"`
	Holding bool `json:"holding,omitempty"`
	WakeAt  Tick `json:"wake_at,omitempty"`
}

// Catchups returns the state of every catch-up stream, in subscription id
// and pubend order.
func (s *SHB) Catchups() []CatchupStatus {
	var out []CatchupStatus
	for _, c := range s.catchingConns() {
		for _, p := range s.cfg.Pubends {
			if cs := c.streams[p]; cs.catchup != nil {
				out = append(out, s.catchupStatus(c, p, cs))
			}
		}
	}
	return out
}

func (s *SHB) catchupStatus(c *conn, p string, cs *connStream) CatchupStatus {
	cu, pb := cs.catchup, s.pubs[p]
	st := CatchupStatus{Sub: c.sub.id, Pubend: p, Pos: cs.pos, Unacked: len(cs.unacked), Pending: len(cu.pending),
		Remote: cu.remote != nil, Holding: cu.holding, WakeAt: c.wakeAt}
	if st.WakeAt == MaxTick {
		st.WakeAt = 0
	}
	if len(cu.pending) == 0 {
		return st
	}
	st.First = cu.pending[0]
	_, st.AtHand = s.atHand(pb, cu, st.First)
	if r := pb.fetch[st.First]; r != nil {
		st.Nacks, st.NextNack = r.attempt, r.last+r.wait
	}
	if until, ok := s.covered(pb, st.First); ok {
		st.CoveredUntil = until
	}
	return st
}

// CoverStatus is a live cover (a span nacked whole for every catch-up
// session, shb_cover.go): its ticks and when it expires unless an answer
// renews it.
type CoverStatus struct {
	Pubend string `json:"pubend"`
	RangeStatus
	// Reached is how far its answer has come (From-1: nothing yet).
	Reached Tick `json:"reached"`
}

// Covers returns the live covers, in pubend order, oldest first.
func (s *SHB) Covers() []CoverStatus {
	var out []CoverStatus
	for _, p := range s.cfg.Pubends {
		for _, c := range s.pubs[p].covers {
			if s.live(c) {
				out = append(out, CoverStatus{Pubend: p, RangeStatus: RangeStatus{From: c.r.From, To: c.r.To, Expires: c.at + c.life}, Reached: c.reached})
			}
		}
	}
	return out
}
