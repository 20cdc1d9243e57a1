package durable

// Claims settle where a subscription that reconnected at another SHB is
// registered (reconnect anywhere). Its old registration stays behind and
// holds release at what the subscriber acknowledged there.
//
// Every registration made by such a reconnection floods a claim with its
// released(s,p) every report interval. The claim holds (Holds) once
// released(s,p) >= the registration's start for every pubend: every tick
// the subscriber may still need from there is then above whatever this SHB
// had reported as released, so its reports hold release at released(s,p).
// An SHB with the same subscription registered:
//   - if the subscriber is connected to it and its registration holds
//     release, answers with a counter-claim (Reply, never answered itself);
//   - if the subscriber is not connected to it, drops its registration on
//     a claim that holds when its own released(s,p) is at most the claim's
//     for every pubend (on a tie, the registration at the SHB with the
//     lower node id stays): release then rests on the claimer, which holds
//     it no lower.
// So a registration left behind goes once the subscriber has moved past
// it, wherever it is connected.

// sendClaims floods the claims of the registrations made by reconnections
// from elsewhere.
func (s *SHB) sendClaims() {
	var cs []Claim
	for _, d := range s.sortedSubs() {
		if d.roamed {
			cs = append(cs, Claim{Sub: d.id, CT: d.released.Clone(), Holds: s.holdsRelease(d)})
		}
	}
	if len(cs) > 0 {
		s.send(s.cfg.Upstream, Msg{Kind: MsgClaim, Origin: s.cfg.Node, Claims: cs})
	}
}

// holdsRelease reports whether released(s,p) reached the registration's
// start on every pubend.
func (s *SHB) holdsRelease(d *durableSub) bool {
	for _, p := range s.cfg.Pubends {
		if d.released[p] < d.start[p] {
			return false
		}
	}
	return true
}

// claim handles another SHB's claims.
func (s *SHB) claim(m Msg) {
	if m.Origin == "" || m.Origin == s.cfg.Node {
		return
	}
	var counter []Claim
	for _, c := range m.Claims {
		d, ok := s.subs[c.Sub]
		if !ok {
			continue
		}
		if _, connected := s.conns[c.Sub]; connected {
			if !c.Reply && s.holdsRelease(d) {
				counter = append(counter, Claim{Sub: d.id, CT: d.released.Clone(), Holds: true, Reply: true})
			}
			continue
		}
		if c.Holds && s.yields(d, c.CT, m.Origin) {
			s.Stats.ClaimDrops++
			s.unsubscribe(d.id)
		}
	}
	if len(counter) > 0 {
		s.send(s.cfg.Upstream, Msg{Kind: MsgClaim, Origin: s.cfg.Node, Claims: counter})
	}
}

// yields reports whether registration d holds release no higher than a
// claim from SHB origin at ct: at most ct on every pubend, and on a tie the
// claimer's node id is the lower.
func (s *SHB) yields(d *durableSub, ct CT, origin string) bool {
	equal := true
	for _, p := range s.cfg.Pubends {
		switch t := ct[p]; {
		case d.released[p] > t:
			return false
		case d.released[p] < t:
			equal = false
		}
	}
	return !equal || origin < s.cfg.Node
}
