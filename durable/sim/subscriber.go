package sim

import (
	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
)

// subscriber is a durable subscriber application: it keeps its CT with
// what it consumed, acknowledges it periodically, and reconnects with its
// CT (sometimes an older one it had, or none).
type subscriber struct {
	id          string
	shb         string
	filter      match.Filter
	ct          durable.CT
	history     []durable.CT // CTs it had, for reconnecting with an older one
	registered  bool         // it has a CT from an earlier session
	startedAt   string       // the SHB of the last session that started
	session     uint64
	connected   bool
	live        bool // the current session has started
	presented   durable.CT
	maxAcked    durable.CT
	lastAcked   durable.CT
	lastMsgTime durable.Tick
	connectedAt durable.Tick
	// received is set by an event received since the last acknowledgement:
	// the SHB queues it until acknowledged, even when it took the CT back
	// to the last acknowledged one (after resuming with an older CT).
	received bool
}

const subAckPeriod = 25_000

// connect opens a session: a first connection presents no CT; a later one
// presents its CT, or with the reconnect fault sometimes an older CT or
// none.
func (s *subscriber) connect(w *world) {
	if s.connected {
		s.disconnect(w) // the earlier attempt's connection closes
	}
	s.session++
	s.connected, s.live, s.received = true, false, false
	s.connectedAt = w.now
	m := durable.Msg{Kind: durable.MsgResume, Sub: s.id, Filter: s.filter, Session: s.session}
	if s.registered {
		m.HasCT, m.CT = true, s.ct.Clone()
		if w.cfg.has(FaultReconnect) && w.chaos {
			switch r := w.rng.Float64(); {
			case r < 0.2 && len(s.history) > 0:
				m.CT = s.history[w.rng.IntN(len(s.history))].Clone()
			case r < 0.3:
				m.HasCT, m.CT = false, nil
			}
		}
	}
	if m.HasCT && w.cfg.has(FaultRoam) && w.chaos && w.rng.Float64() < 0.3 {
		s.roam(w, m.CT)
	}
	if !m.HasCT && s.registered && s.shb != s.startedAt {
		// Without a CT an SHB that has not registered it would start a
		// new subscription and leave the old registration behind: a
		// subscriber that moves presents its CT until a session has
		// started at its new SHB.
		m.HasCT, m.CT = true, s.ct.Clone()
	}
	s.presented = m.CT
	w.trace("connect %s at %s session %d ct=%v", s.id, s.shb, s.session, m.CT)
	w.send(durable.Envelope{From: s.id, To: s.shb, Msg: m})
}

// roam moves the subscriber to another SHB, where it presents ct. The SHB
// holds release from a CT presented there as from an acknowledgement, so
// the oracle counts it as one.
func (s *subscriber) roam(w *world, ct durable.CT) {
	shbs := w.shbNames()
	next := shbs[w.rng.IntN(len(shbs))]
	if next == s.shb {
		return
	}
	w.stats.Roams++
	s.shb = next
	for p, t := range ct {
		s.maxAcked[p] = max(s.maxAcked[p], t)
	}
}

// disconnect closes the session; the SHB's driver notices.
func (s *subscriber) disconnect(w *world) {
	s.connected, s.live = false, false
	w.send(durable.Envelope{From: s.id, To: s.shb, Msg: durable.Msg{Kind: durable.MsgDisconnect, Sub: s.id, Session: s.session}})
}

// timer acknowledges the CT if it moved.
func (s *subscriber) timer(w *world) {
	if s.connected && !s.live && w.now-s.connectedAt > 100_000 {
		s.connect(w) // no answer (the SHB was down): try a new session
		return
	}
	if !s.live || (ctEqual(s.ct, s.lastAcked) && !s.received) {
		return
	}
	s.received = false
	s.lastAcked = s.ct.Clone()
	for p, t := range s.ct {
		s.maxAcked[p] = max(s.maxAcked[p], t)
	}
	s.history = append(s.history, s.ct.Clone())
	if len(s.history) > 16 {
		s.history = s.history[1:]
	}
	w.send(durable.Envelope{From: s.id, To: s.shb, Msg: durable.Msg{Kind: durable.MsgAck, Sub: s.id, CT: s.ct.Clone()}})
}

func (s *subscriber) receive(w *world, m durable.Msg) {
	if !s.connected || m.Session != s.session {
		return // in flight when the session ended
	}
	s.lastMsgTime = w.now
	switch m.Kind {
	case durable.MsgStart:
		s.start(w, m.CT)
	case durable.MsgRefused:
		w.violate("subscriber %s refused: %s", s.id, m.Reason)
	case durable.MsgEvent, durable.MsgSubSilence, durable.MsgGap:
		if !s.live {
			w.violate("subscriber %s: %v before the session started", s.id, m)
			return
		}
		w.oracle.check(w, s, m)
		s.received = s.received || m.Kind == durable.MsgEvent
	default:
		w.violate("subscriber %s: unexpected %v", s.id, m)
	}
}

func (s *subscriber) start(w *world, ct durable.CT) {
	if s.presented != nil {
		for p, t := range s.presented {
			if ct[p] != t {
				w.violate("subscriber %s presented %v, session starts at %v", s.id, s.presented, ct)
				break
			}
		}
	}
	s.live, s.registered, s.startedAt = true, true, s.shb
	s.ct = ct.Clone()
	if s.lastAcked == nil {
		s.lastAcked = ct.Clone()
		s.maxAcked = ct.Clone()
	}
}

func ctEqual(a, b durable.CT) bool {
	if len(a) != len(b) {
		return false
	}
	for p, t := range a {
		if b[p] != t {
			return false
		}
	}
	return true
}

// cutSubscriber ends a subscriber's session from the SHB side (a crash)
// and schedules its reconnection.
func (w *world) cutSubscriber(s *subscriber) {
	s.connected, s.live = false, false
	w.at(w.now+durable.Tick(5_000+w.rng.IntN(50_000)), func() {
		if !s.connected {
			s.connect(w)
		}
	})
}
