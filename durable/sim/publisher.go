package sim

import (
	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
)

// publisher is an idempotent publishing client: it numbers its events,
// keeps up to window of them unacknowledged, and resends from the highest
// acknowledged sequence after a timeout, a refusal or a reconnection.
type publisher struct {
	id        string
	phb       string
	pubend    string
	events    []match.Event // events[i] has sequence i+1
	available int           // events the application has handed over so far
	acked     uint64        // every sequence up to here is logged
	nextSend  uint64
	lastAck   durable.Tick
	downUntil durable.Tick // connection lost until then
	heldUntil durable.Tick // refused for a full disk: resend then
}

const (
	pubWindow      = 4
	pubResendAfter = 30_000
	pubHoldBack    = 20_000
)

func (p *publisher) send(w *world, m durable.Msg) {
	if w.now < p.downUntil {
		return
	}
	m.Publisher = p.id
	w.send(durable.Envelope{From: p.id, To: p.phb, Msg: m})
}

// pump sends what the window allows.
func (p *publisher) pump(w *world) {
	if w.now < p.heldUntil {
		return
	}
	p.nextSend = max(p.nextSend, p.acked+1)
	for p.nextSend <= min(p.acked+pubWindow, uint64(p.available)) {
		p.send(w, durable.Msg{Kind: durable.MsgPublish, Seq: p.nextSend, Event: p.events[p.nextSend-1]})
		p.nextSend++
	}
}

// timer resends the window when nothing was acknowledged for a while.
func (p *publisher) timer(w *world) {
	if p.acked < uint64(p.available) && w.now-p.lastAck >= pubResendAfter {
		p.lastAck = w.now
		p.nextSend = p.acked + 1
		p.pump(w)
	}
}

// disconnect loses the connection for a while; on reconnection the
// publisher says hello and resends everything unacknowledged.
func (p *publisher) disconnect(w *world, d durable.Tick) {
	p.downUntil = w.now + d
	w.at(p.downUntil, func() {
		p.nextSend = p.acked + 1
		p.send(w, durable.Msg{Kind: durable.MsgHello})
	})
}

func (p *publisher) receive(w *world, m durable.Msg) {
	if w.now < p.downUntil {
		return
	}
	switch m.Kind {
	case durable.MsgHelloAck, durable.MsgPubRefused:
		p.advance(w, m.Seq)
		p.nextSend = p.acked + 1
		if m.Kind == durable.MsgPubRefused && m.Reason != "" {
			// The PHB's store cannot take events (a full disk): hold
			// back, then resend, as client.DurablePublisher does.
			if w.now >= p.heldUntil {
				p.heldUntil = w.now + pubHoldBack
				w.at(p.heldUntil, func() { p.pump(w) })
			}
			return
		}
	case durable.MsgPubAck:
		if m.Tick != 0 {
			w.oracle.acked(w, p.pubend, p.id, m.Seq, m.Tick)
		}
		p.advance(w, m.Seq)
	default:
		w.violate("publisher %s: unexpected %v", p.id, m)
	}
	p.pump(w)
}

func (p *publisher) advance(w *world, seq uint64) {
	if seq > uint64(p.available) {
		w.violate("publisher %s: PHB claims sequence %d logged, only %d published", p.id, seq, p.available)
		return
	}
	if seq > p.acked {
		p.acked = seq
		p.lastAck = w.now
	}
}

func (p *publisher) done() bool { return p.acked == uint64(len(p.events)) }
