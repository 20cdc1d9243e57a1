package durable

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// resume handles a subscriber's (re)connection (rule SHB 9).
func (s *SHB) resume(env Envelope) error {
	m := env.Msg
	if old, ok := s.conns[m.Sub]; ok && old.session != m.Session {
		s.dropConn(m.Sub) // a second resume closes the first connection
	}
	if d, ok := s.subs[m.Sub]; ok {
		if !d.filter.Equal(m.Filter) {
			s.refuse(env, fmt.Sprintf("subscription %s exists with filter %q", m.Sub, d.filter.String()))
			return nil
		}
		start := d.released.Clone()
		if m.HasCT {
			for _, p := range s.cfg.Pubends {
				if t, ok := m.CT[p]; ok {
					start[p] = t
				} else {
					start[p] = d.start[p]
				}
			}
		}
		s.open(d, env.From, m.Session, start)
		return nil
	}
	var ct CT // an unknown id with a CT: registered elsewhere (reconnect anywhere)
	if m.HasCT {
		ct = m.CT.Clone()
	}
	if ps, ok := s.pending[m.Sub]; ok {
		if !ps.filter.Equal(m.Filter) {
			s.refuse(env, fmt.Sprintf("subscription %s is being registered with another filter", m.Sub))
			return nil
		}
		ps.node, ps.session = env.From, m.Session
		if ct != nil {
			// Without a CT it resumes from the one it presented before.
			ps.ct = ct
		}
		return nil
	}
	ps := &pendingSub{id: m.Sub, filter: m.Filter, node: env.From, session: m.Session, ct: ct}
	s.pending[m.Sub] = ps
	s.bumpVersion()
	ps.ver = s.version
	s.sendInstall(ps)
	return nil
}

func (s *SHB) refuse(env Envelope, reason string) {
	s.send(env.From, Msg{Kind: MsgRefused, Sub: env.Msg.Sub, Session: env.Msg.Session, Reason: reason})
}

func (s *SHB) bumpVersion() {
	s.version++
	s.epochDirty = true
}

func (s *SHB) sendInstall(ps *pendingSub) {
	ps.lastSent = s.now
	s.send(s.cfg.Upstream, Msg{Kind: MsgInstall, Sub: ps.id, Filter: ps.filter, Epoch: s.epoch, Version: s.version,
		Origin: s.cfg.Node, Born: s.stampBorn()})
}

// installAck registers a pending subscription. Its start CT is, per pubend,
// max(LD, the tick the hop acknowledged, the highest tick already known),
// and from now on filtered silences stamped before the acknowledgement's
// stamp are ignored (they may be in flight from before the install, or
// from an earlier incarnation of the router), for every filtering router
// on the path, so every tick above the start CT is judged with the new
// filter included. Only an acknowledgement of one of this pending
// subscription's installs counts (this epoch, at or above its first
// version): one still in flight for an install of an earlier incarnation,
// or of an earlier registration of the id, may have been made before a
// hop held the filter as it is now. The registry and released(s,p) are
// synced before anything reaches the subscriber.
func (s *SHB) installAck(m Msg) error {
	ps, ok := s.pending[m.Sub]
	if !ok {
		return nil // a duplicate acknowledgement
	}
	if m.Epoch != s.epoch || m.Version < ps.ver {
		return nil // answers an install this registration did not send
	}
	delete(s.pending, m.Sub)
	d := &durableSub{sid: s.nextSID, id: ps.id, filter: ps.filter, start: CT{}, released: CT{}, written: CT{}, roamed: ps.ct != nil}
	s.nextSID++
	s.epochDirty = true
	for _, p := range s.cfg.Pubends {
		// Knowledge already received may have been filtered without the
		// new filter: start above all of it.
		d.start[p] = max(s.pubs[p].ld, m.CT[p], s.pubs[p].in.Highest())
	}
	for _, st := range m.Stamps {
		if old, ok := s.stamps[st.Node]; !ok || older(old.Epoch, old.Version, st.Epoch, st.Version) {
			s.stamps[st.Node] = st
			s.w.set(shbStampKey(st.Node), encodeTicks(Tick(st.Epoch), Tick(st.Version)))
		}
	}
	s.setSub(d)
	s.w.set(shbRegKey(d.sid), encodeRegistry(d))
	start := d.start.Clone()
	for _, p := range s.cfg.Pubends {
		if t, ok := ps.ct[p]; ok {
			// Registered elsewhere: it holds release from the CT it
			// presented, and its session starts there.
			start[p] = t
		}
		s.setReleased(d, p, start[p])
	}
	if ps.node != "" {
		s.open(d, ps.node, ps.session, start)
	}
	return nil
}

// open starts a session at the given CT: up to date on pubends where the
// CT is at or above LD, catching up elsewhere; where the CT is below the
// registration's start, the catch-up first fetches the ticks the PFS does
// not cover from upstream.
func (s *SHB) open(d *durableSub, node string, session uint64, start CT) {
	c := &conn{sub: d, node: node, session: session, streams: map[string]*connStream{}}
	for _, p := range s.cfg.Pubends {
		cs := &connStream{pos: start[p]}
		switch {
		case start[p] < d.start[p]:
			cs.catchup = newRemoteCatchup(start[p], d.start[p])
		case start[p] < s.pubs[p].ld:
			cs.catchup = newCatchup(start[p])
		}
		if cs.catchup != nil {
			cs.catchup.holding, cs.catchup.openedAt = true, s.now
			s.lastOpen = s.now
			s.countBehind(p, cs.pos)
		}
		c.streams[p] = cs
	}
	s.setConn(d.id, c) // enters it in catching if a stream catches up
	s.Stats.Opened++
	s.toSub(c, Msg{Kind: MsgStart, CT: start})
}

// countBehind counts a session opened catching up on p from pos in the
// stats, with the PFS records it has to read (a binary search).
func (s *SHB) countBehind(p string, pos Tick) {
	s.Stats.OpenedBehind++
	pb := s.pubs[p]
	if n, err := pb.pfs.countIn(Range{pos + 1, pb.ld}); err == nil {
		s.Stats.BehindRecords += n
	}
}

// ack records a subscriber's acknowledged CT: released(s,p) only grows,
// and the acknowledged events leave the session's queue.
func (s *SHB) ack(m Msg) {
	d, ok := s.subs[m.Sub]
	if !ok {
		return
	}
	c := s.conns[m.Sub]
	for _, p := range s.cfg.Pubends {
		t, ok := m.CT[p]
		if !ok {
			continue
		}
		if t > d.released[p] {
			s.holdAck(d, p, t)
		}
		if c != nil {
			cs := c.streams[p]
			n, _ := slices.BinarySearch(cs.unacked, t+1)
			cs.unacked = cs.unacked[n:]
			if cs.catchup != nil {
				s.markDirty(c) // its queue has room again
			}
		}
	}
}

func (s *SHB) setReleased(d *durableSub, p string, t Tick) {
	d.released[p] = t
	d.written[p] = t
	s.w.set(releasedKey(p, d.sid), encodeTicks(t))
}

// subPubend names released(s,p) of one registration (by sid) and pubend.
type subPubend struct {
	sid uint64
	p   string
}

// holdAck raises released(s,p) to an acknowledged t, to be written with
// the next batch that has writes anyway, or after ProgressHold (rule SHB
// 6: persisted periodically): an idle subscriber acknowledging every
// idle silence costs no sync of its own. Reports use the written value
// (durableSub.written), so a crash that forgets a held acknowledgement
// leaves every report sent at or below what is on disk: the restarted
// SHB holds release from there, lower than the subscriber's CT, which
// costs nothing but a later release. A subscriber resuming with its CT
// goes on from the CT; one resuming without a CT resumes from released
// (at-least-once, as rule SHB 9 says for it). Claims compare the value
// in memory, which is only above the one reported, so a claim that
// holds still holds release at least as low as it says.
func (s *SHB) holdAck(d *durableSub, p string, t Tick) {
	d.released[p] = t
	if _, ok := d.written[p]; !ok {
		s.setReleased(d, p, t)
		return
	}
	if len(s.acksHeld) == 0 {
		s.acksSince = s.now
	}
	s.acksHeld[subPubend{d.sid, p}] = struct{}{}
}

// writeAcks writes the held acknowledgements of registrations still
// registered.
func (s *SHB) writeAcks() {
	keys := slices.SortedFunc(maps.Keys(s.acksHeld), func(a, b subPubend) int {
		return cmp.Or(cmp.Compare(a.sid, b.sid), cmp.Compare(a.p, b.p))
	})
	for _, k := range keys {
		if d, ok := s.bySID[k.sid]; ok {
			s.setReleased(d, k.p, d.released[k.p])
		}
	}
	clear(s.acksHeld)
}

// disconnect ends a session (the driver saw its connection close).
func (s *SHB) disconnect(m Msg) {
	if c, ok := s.conns[m.Sub]; ok && c.session == m.Session {
		s.dropConn(m.Sub)
	}
	if ps, ok := s.pending[m.Sub]; ok && ps.session == m.Session {
		ps.node = ""
	}
}

// unsubscribe removes a durable subscription everywhere (rule SHB 10); its
// released(s,p) no longer holds release back. A subscription still
// waiting for its install acknowledgement is withdrawn: the
// acknowledgement, when it comes, registers nothing.
func (s *SHB) unsubscribe(id string) {
	if _, ok := s.pending[id]; ok {
		delete(s.pending, id)
		s.bumpVersion()
		s.send(s.cfg.Upstream, Msg{Kind: MsgUninstall, Sub: id, Epoch: s.epoch, Version: s.version})
		return
	}
	d, ok := s.subs[id]
	if !ok {
		return
	}
	s.dropSub(id)
	s.dropConn(id)
	s.w.del(shbRegKey(d.sid))
	for _, p := range s.cfg.Pubends {
		s.w.del(releasedKey(p, d.sid))
		s.w.del(pfsLastKey(p, d.sid))
		delete(s.pubs[p].pfs.lastIndex, d.sid)
	}
	s.bumpVersion()
	s.send(s.cfg.Upstream, Msg{Kind: MsgUninstall, Sub: id, Epoch: s.epoch, Version: s.version})
}

// sendFilters answers a resync with the whole filter set: registered and
// pending subscriptions.
func (s *SHB) sendFilters(nonce uint64) {
	var subs []SubFilter
	for _, d := range s.sortedSubs() {
		subs = append(subs, SubFilter{Sub: d.id, Filter: d.filter})
	}
	for _, id := range slices.Sorted(mapKeys(s.pending)) {
		subs = append(subs, SubFilter{Sub: id, Filter: s.pending[id].filter})
	}
	s.send(s.cfg.Upstream, Msg{Kind: MsgFilters, Subs: subs, Epoch: s.epoch, Version: s.version, Nonce: nonce})
}
