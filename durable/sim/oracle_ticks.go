package sim

import "github.com/sift-pubsub/sift/durable"

// announced checks a PHB's knowledge message against everything the pubend
// announced before (rules T1 and T2): a tick once announced as silence is
// never announced as data, nor data as silence or as another event, also
// across restarts and with the PHB's clock set back.
func (o *oracle) announced(w *world, m durable.Msg) {
	st := o.announcements[m.Pubend]
	if st == nil {
		st = durable.NewStream(0)
		o.announcements[m.Pubend] = st
	}
	var silent durable.Range
	switch m.Kind {
	case durable.MsgData:
		silent = durable.Range{From: m.Prev + 1, To: m.Tick - 1}
		switch state, e := st.Get(m.Tick); {
		case state == durable.S:
			w.violate("pubend %s announced tick %d as silence, now as data %v", m.Pubend, m.Tick, m.Event)
			return
		case state == durable.D && !e.Equal(m.Event):
			w.violate("pubend %s announced tick %d as %v, now as %v", m.Pubend, m.Tick, e, m.Event)
			return
		}
	case durable.MsgSilence:
		silent = durable.Range{From: m.From, To: m.To}
	case durable.MsgLost:
		o.lostAnnounced(w, m)
		return
	default:
		return
	}
	for _, seg := range st.Segments(silent) {
		if seg.State == durable.D {
			w.violate("pubend %s announced tick %d as data %v, now %v says silence", m.Pubend, seg.From, seg.Event, m)
			return
		}
	}
	st.AddSilence(silent.From, silent.To)
	if m.Kind == durable.MsgData {
		st.AddData(m.Tick, m.Event)
	}
}

// lostAnnounced checks an L prefix as the pubend announces it. A release
// over silent ticks only may be announced before it is written (the
// pubend holds it back: durable.Pubend's writeHeld), so an announced
// prefix above the durable one must cover no logged tick above it; a
// crash may make the pubend forget it, and its ticks stay released for
// the gap checks, as they held no event. Either way it must respect
// every member SHB's LD, as a written release must (releasedIn).
func (o *oracle) lostAnnounced(w *world, m durable.Msg) {
	p := m.Pubend
	if m.Tick <= max(o.lost[p], o.heldLost[p]) {
		return // written, repeated, or a restarted pubend's older prefix
	}
	if anyIn(o.ticks[p], o.lost[p]+1, m.Tick) {
		w.violate("pubend %s announced L up to %d before writing it, over logged ticks above its written prefix %d", p, m.Tick, o.lost[p])
		return
	}
	o.heldLost[p] = m.Tick
	excused := map[string]bool{}
	for shb, d := range o.dropped[p] {
		excused[shb] = d
	}
	o.checkReleaseBound(w, p, m.Tick, excused)
}
