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
