package router

import (
	"time"

	"github.com/sift-pubsub/sift/router/core"
)

// The matching loop drives router/core: it ticks the core with the time
// before each input that may arm a deadline (deadlines are measured from
// the latest tick), steps it, carries out its Ready in field order, and
// keeps one timer on the core's earliest deadline, whose channel the loop
// selects on beside its input (run): when it fires, the loop ticks the
// core. No callback runs on another goroutine.

// coreTimer is the loop's timer on the core's deadline.
type coreTimer struct {
	// on: the loop keeps a timer; off in tests that drive the loop by
	// hand (step), which tick the core themselves.
	on    bool
	t     *time.Timer
	armed time.Time // the deadline t is set for; zero: none
}

// fired returns the channel the timer fires on; nil (never ready) when
// it is not armed.
func (t *coreTimer) fired() <-chan time.Time {
	if t.armed.IsZero() {
		return nil
	}
	return t.t.C
}

// stop stops the timer (the loop is done).
func (t *coreTimer) stop() {
	if t.t != nil {
		t.t.Stop()
	}
	t.armed = time.Time{}
}

// coreMsg is the loop message carrying core input in; the loop steps it
// only while its connection (in.From) is attached.
func coreMsg(in core.Input) loopMsg {
	return loopMsg{in: in}
}

// stepCore ticks the core with the current time, steps it with in and
// carries out its effects.
func (l *matchLoop) stepCore(in core.Input) error {
	err := l.feedCore(in)
	l.carryCore()
	return err
}

// feedCore ticks the core with the current time and steps it with in,
// leaving its effects for carryCore.
func (l *matchLoop) feedCore(in core.Input) error {
	l.core.Tick(time.Now())
	return l.core.Step(in)
}

// tickCore ticks the core (its deadline passed: the loop's timer fired) and carries out
// its effects.
func (l *matchLoop) tickCore() {
	l.timer.armed = time.Time{} // fired: set it again if a deadline remains
	l.core.Tick(time.Now())
	l.carryCore()
}

// carryCore carries out the core's Readys: the names its readers must now
// decode, metrics, deliveries and forwards, then frames onto the
// connections' control lanes (dropped for connections gone), then the
// replies to clients' requests, then the connections the core closed;
// then it sets the timer on the core's deadline.
func (l *matchLoop) carryCore() {
	for l.core.HasReady() {
		rd := l.core.Ready()
		l.want.add(rd.Wanted) // wanted.go
		for _, m := range rd.Metrics {
			l.countCore(m)
		}
		l.carryEvents(&rd)
		for _, f := range rd.Frames {
			if c, ok := l.conns[f.Conn]; ok {
				l.pushControl(c, f.Data)
			}
		}
		for _, r := range rd.Replies {
			l.reply(r.Conn, r.About, r.Ref, r.Err)
		}
		for _, cl := range rd.Close {
			if c, ok := l.conns[cl.Conn]; ok {
				c.fail(cl.Code, cl.Reason)
				l.dropConn(cl.Conn) // the core has dropped it already
			}
		}
		l.core.Advance()
	}
	l.armCore()
}

// carryEvents encodes the Ready's deliveries into their clients' Deliver
// frames and stages its forwards for their links' data lanes, then
// queues everything staged (deliver.go), ahead of the Ready's frames.
func (l *matchLoop) carryEvents(rd *core.Ready) {
	if len(rd.Deliveries) == 0 && len(rd.Forwards) == 0 {
		return
	}
	for _, d := range rd.Deliveries {
		if c, ok := l.conns[d.Conn]; ok {
			l.deliver(c, d.Subs, d.Event, l.at)
		}
	}
	for _, f := range rd.Forwards {
		if c, ok := l.conns[f.Conn]; ok {
			l.stage(c, delivery{raw: f.Data, witness: f.Witness})
		}
	}
	l.flush()
}

// countCore applies one of the core's metric updates.
func (l *matchLoop) countCore(m core.Metric) {
	switch m.Kind {
	case core.Errors:
		l.metrics.Errors.WithLabelValues(m.Code.String()).Add(float64(m.N))
	case core.BloomTerms:
		l.metrics.Bloom.DictionaryTerms.Set(float64(m.N))
	case core.BloomFilters:
		l.metrics.Bloom.TreeFilters.Set(float64(m.N))
	case core.Subscriptions:
		l.metrics.Subscriptions.Set(float64(m.N))
	case core.Matches:
		l.metrics.Matches.Add(float64(m.N))
	case core.EventsIn:
		l.metrics.EventsIn.Add(float64(m.N))
	case core.ByIndex, core.ByWitness, core.ByCache:
		l.metrics.LinkTable.count(m.Kind, m.N)
	case core.AdvertRefused:
		l.adverts.refused.Add(float64(m.N))
	case core.BloomSummaries, core.BloomFill, core.BloomSaturated, core.BloomExactIn, core.BloomFalseForwards,
		core.BloomTreeWalks, core.BloomWitnessDecisions:
		l.countBloom(m) // bloom.go
	default:
		l.countAssist(m) // rto.go
	}
}

// armCore sets the timer on the core's earliest deadline.
func (l *matchLoop) armCore() {
	t := &l.timer
	d, ok := l.core.Deadline()
	switch {
	case !t.on:
	case !ok:
		if !t.armed.IsZero() {
			t.t.Stop()
			t.armed = time.Time{}
		}
	case d.Equal(t.armed):
	case t.t == nil:
		t.armed, t.t = d, time.NewTimer(time.Until(d))
	default:
		t.armed = d
		t.t.Reset(time.Until(d))
	}
}
