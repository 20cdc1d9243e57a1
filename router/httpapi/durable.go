package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/client"
)

// silenceEvery is how often a durable stream that only hears silences
// writes its advanced checkpoint token (an id: line alone, which moves the
// browser's Last-Event-ID without an event) and acknowledges it.
const silenceEvery = time.Second

// subscribeDurable streams durable subscription id as SSE. A
// Last-Event-ID header (or ?last_event_id=, for clients that cannot set
// headers) is the checkpoint token to resume after; without one, a known
// id resumes from its last acknowledgement at the SHB and a new one
// starts now. Each event's id: is the token after it; a gap is an "event:
// gap" message with the released range.
//
// Acknowledgements (what lets the SHB release ticks, and lets a session
// run more than its window of unacknowledged events ahead): with &ack=auto
// (the default) the gateway acknowledges each token once it is written
// and flushed to the connection; with &ack=client only the token the
// client presents (Last-Event-ID on reconnection, or POST /v1/ack), so
// that nothing the client has not confirmed is ever released, at the price
// of a client that must confirm at least every window of events (1024 by
// default) or the stream waits.
func (g *Gateway) subscribeDurable(w http.ResponseWriter, r *http.Request, id, filter string, ce bool) {
	if id == "" {
		httpError(w, http.StatusBadRequest, "&durable= needs the subscription's id", nil)
		return
	}
	var autoAck bool
	switch a := r.URL.Query().Get("ack"); a {
	case "", "auto":
		autoAck = true
	case "client":
	default:
		httpError(w, http.StatusBadRequest, fmt.Sprintf("&ack=%q: want auto or client", a), nil)
		return
	}
	var ct client.CT
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("last_event_id")
	}
	if last != "" {
		var err error
		if ct, err = decodeCT(last); err != nil {
			httpError(w, http.StatusBadRequest, err.Error(), nil)
			return
		}
	}
	ds, err := client.DurableSubscribe(r.Context(), client.DurableSubscribeOptions{
		DurableOptions: g.durableOptions("http-durable"),
		ID:             id,
		Filter:         filter,
		CT:             ct,
	})
	if err != nil {
		subscribeError(w, fmt.Errorf("durable subscription %s: %w", id, err))
		return
	}
	defer ds.Close()
	g.sessions.Store(id, ds)
	defer g.sessions.CompareAndDelete(id, ds)
	cur := client.CT{}
	for p, t := range ct {
		cur[p] = t
	}
	if ct != nil {
		ds.Ack(ct.Clone()) // the client holds it: everything up to it is consumed
	}
	g.stats.durableSubs.Add(1)
	defer g.stats.durableSubs.Add(-1)
	g.streamDurable(w, r, ds, cur, ce, autoAck)
}

// streamDurable writes the session's messages until the client leaves or
// the subscription ends, acknowledging each flushed token.
func (g *Gateway) streamDurable(w http.ResponseWriter, r *http.Request, ds *client.DurableSubscription, cur client.CT, ce, autoAck bool) {
	startSSE(w)
	g.stats.subscribers.Add(1)
	defer g.stats.subscribers.Add(-1)
	fl := w.(http.Flusher)
	beat := time.NewTicker(g.cfg.Heartbeat)
	defer beat.Stop()
	quiet := time.NewTicker(silenceEvery)
	defer quiet.Stop()
	source := "/sift/" + g.cfg.Router.Name()
	var buf []byte
	unsent := false // silences moved cur past the last id written
	write := func(b []byte) bool {
		_, err := w.Write(b)
		return err == nil
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ds.Done():
			write(errorMessage("durable subscription ended: " + errString(ds.Err())))
			fl.Flush()
			return
		case <-beat.C:
			if !write(heartbeat) {
				return
			}
			fl.Flush()
		case <-quiet.C:
			if !unsent {
				continue
			}
			if !write(fmt.Appendf(buf[:0], "id: %s\n\n", encodeCT(cur))) {
				return
			}
			fl.Flush()
			unsent = false
			if autoAck {
				ds.Ack(cur.Clone())
			}
		case m, ok := <-ds.Messages():
			if !ok {
				write(errorMessage("durable subscription ended: " + errString(ds.Err())))
				fl.Flush()
				return
			}
			// Take every message waiting, then flush and acknowledge once.
			n := 0
		drain:
			for {
				var msg []byte
				msg, unsent = g.durableMessage(buf[:0], m, cur, ce, source, unsent)
				if msg != nil {
					if !write(msg) {
						return
					}
					n++
					buf = msg
				}
				if n >= 256 {
					break
				}
				select {
				case m, ok = <-ds.Messages():
					if !ok {
						break drain // the next round reports the end
					}
				default:
					break drain
				}
			}
			if n > 0 {
				fl.Flush()
				g.stats.delivered.Add(uint64(n))
				if autoAck {
					ds.Ack(cur.Clone())
				}
			}
		}
	}
}

// durableMessage advances cur past m and returns the SSE message to write
// for it (nil for silences, which only set unsent).
func (g *Gateway) durableMessage(b []byte, m client.DurableMessage, cur client.CT, ce bool, source string, unsent bool) ([]byte, bool) {
	m.Advance(cur)
	switch m.Kind {
	case client.DurableStart:
		return fmt.Appendf(b, "id: %s\n\n", encodeCT(cur)), false
	case client.DurableEvent:
		var data []byte
		if ce {
			data = appendCloudEvent(nil, m.Event, fmt.Sprintf("%s-%d", m.Pubend, m.Tick), source)
		} else {
			data = m.Event.AppendJSON(nil)
		}
		return dataMessage(b, encodeCT(cur), data), false
	case client.DurableGap:
		data := fmt.Appendf(nil, `{"pubend":%s,"from":%d,"to":%d}`, match.Str(m.Pubend).AppendJSON(nil), m.From, m.To)
		return dataMessage(append(b, "event: gap\n"...), encodeCT(cur), data), false
	}
	return nil, true // a silence
}

func errString(err error) string {
	if err == nil {
		return "closed"
	}
	if errors.Is(err, client.ErrClosed) {
		return "closed"
	}
	return err.Error()
}

// ack serves POST /v1/ack?durable=ID: the client confirms the checkpoint
// token in its Last-Event-ID header (or ?last_event_id=) for the open
// session of durable subscription ID (for &ack=client streams; harmless
// for others). 204 once handed to the session; 404 without a session.
func (g *Gateway) ack(w http.ResponseWriter, r *http.Request, _ string) {
	id := r.URL.Query().Get("durable")
	tok := r.Header.Get("Last-Event-ID")
	if tok == "" {
		tok = r.URL.Query().Get("last_event_id")
	}
	if id == "" || tok == "" {
		httpError(w, http.StatusBadRequest, "POST /v1/ack needs ?durable=ID and the token (Last-Event-ID header or ?last_event_id=)", nil)
		return
	}
	ct, err := decodeCT(tok)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error(), nil)
		return
	}
	v, ok := g.sessions.Load(id)
	if !ok {
		httpError(w, http.StatusNotFound, "no open stream of durable subscription "+id+" at this gateway (a reconnection with Last-Event-ID acknowledges too)", nil)
		return
	}
	if err := v.(*client.DurableSubscription).Ack(ct); err != nil {
		httpError(w, http.StatusGone, "durable subscription "+id+": "+err.Error(), nil)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
