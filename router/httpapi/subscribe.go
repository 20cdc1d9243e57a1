package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/client"
)

// subscribe serves GET /v1/subscribe: it checks the filter (a 400 with
// the column), the client's permission and the format, installs the
// subscription (plain, or durable with &durable=ID) and streams the
// matching events as Server-Sent Events.
func (g *Gateway) subscribe(w http.ResponseWriter, r *http.Request, clientName string) {
	q := r.URL.Query()
	if !q.Has("filter") {
		httpError(w, http.StatusBadRequest, `?filter= is required (the filter language, e.g. symbol == "IBM" && price < 10; * matches every event)`, nil)
		return
	}
	text := q.Get("filter")
	f, err := match.Parse(text)
	if err != nil {
		filterError(w, err)
		return
	}
	for _, a := range f.Attrs() {
		if opaque(a) {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("filter: attribute %s is an event's opaque payload and cannot be filtered on", a), map[string]any{"attribute": a})
			return
		}
	}
	if p := g.permit(); p != nil {
		if err := p.Subscribe(clientName, f); err != nil {
			httpError(w, http.StatusForbidden, fmt.Sprintf("client %s may not subscribe to %s: %v", clientName, text, err), nil)
			return
		}
	}
	ce, err := wantsCloudEvents(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error(), nil)
		return
	}
	if _, ok := w.(http.Flusher); !ok {
		httpError(w, http.StatusInternalServerError, "streaming is not supported by this server", nil)
		return
	}
	if id := q.Get("durable"); id != "" || q.Has("durable") {
		g.subscribeDurable(w, r, id, text, ce)
		return
	}
	sk := newSink(g.cfg.SubscriberBuffer)
	sk.ce = ce
	sub, pc, err := g.pool.subscribe(r.Context(), text, sk)
	if err != nil {
		subscribeError(w, err)
		return
	}
	if g.detach(w, r, sk, pc, sub) { // detached.go: HTTP/1 streams hold no goroutine
		return
	}
	defer pc.unsubscribe(&g.pool, sub)
	g.serveSSE(w, r, sk)
}

// filterError answers a filter that does not parse: 400 with the column.
func filterError(w http.ResponseWriter, err error) {
	var pe *match.ParseError
	if errors.As(err, &pe) {
		httpError(w, http.StatusBadRequest, "filter: "+pe.Error(), map[string]any{"column": pe.Col})
		return
	}
	httpError(w, http.StatusBadRequest, "filter: "+err.Error(), nil)
}

// subscribeError answers a subscription the router refused (400 for the
// request's fault) or could not take (503).
func subscribeError(w http.ResponseWriter, err error) {
	var pe *wire.ProtocolError
	if errors.As(err, &pe) && pe.Code == wire.CodeBadFilter {
		httpError(w, http.StatusBadRequest, "filter: "+pe.Msg, nil)
		return
	}
	if errors.Is(err, client.ErrRefused) {
		httpError(w, http.StatusConflict, err.Error(), nil)
		return
	}
	httpError(w, http.StatusServiceUnavailable, "subscribe: "+err.Error(), nil)
}

// wantsCloudEvents reads the stream format: &format=ce or json, or by
// default the Accept header (application/cloudevents+json).
func wantsCloudEvents(r *http.Request) (bool, error) {
	switch f := r.URL.Query().Get("format"); f {
	case "ce", "cloudevents":
		return true, nil
	case "json":
		return false, nil
	case "":
		return strings.Contains(r.Header.Get("Accept"), ceJSON), nil
	default:
		return false, fmt.Errorf("?format=%q: want json or ce", f)
	}
}

// startSSE writes the stream's headers and a first comment, so that the
// client knows the subscription is installed.
func startSSE(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(": subscribed\n\n"))
	w.(http.Flusher).Flush()
}

// heartbeat is the comment written every Config.Heartbeat.
var heartbeat = []byte(": keep-alive\n\n")

// serveSSE streams a plain subscriber's sink until the client goes away,
// the subscriber falls behind (an "event: end" message),
// or the subscription ends.
func (g *Gateway) serveSSE(w http.ResponseWriter, r *http.Request, sk *sink) {
	startSSE(w)
	g.stats.subscribers.Add(1)
	defer g.stats.subscribers.Add(-1)
	fl := w.(http.Flusher)
	tick := time.NewTicker(g.cfg.Heartbeat)
	defer tick.Stop()
	var buf [][]byte
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if _, err := w.Write(heartbeat); err != nil {
				return
			}
			fl.Flush()
		case <-sk.wake:
			msgs, over, ended := sk.take(buf)
			for _, m := range msgs {
				if _, err := w.Write(m); err != nil {
					return
				}
			}
			g.stats.delivered.Add(uint64(len(msgs)))
			clear(msgs)
			buf = msgs[:0]
			switch {
			case over:
				g.stats.slow.Add(1)
				w.Write(errorMessage("slow consumer: more than the gateway's buffer of events were waiting for this stream; reconnect (a durable subscription misses nothing)"))
			case ended != nil:
				w.Write(errorMessage("subscription ended: " + ended.Error()))
			}
			fl.Flush()
			if over || ended != nil {
				return
			}
		}
	}
}

// errorMessage is the last SSE message of a stream the gateway ends: type
// "end" (not "error", which EventSource reserves), its data a JSON object
// {"error": msg}.
func errorMessage(msg string) []byte {
	return fmt.Appendf(nil, "event: end\ndata: {\"error\":%s}\n\n", match.Str(msg).AppendJSON(nil))
}

// subPool holds the connections that carry plain SSE subscriptions, each
// with at most Config.SubscriptionsPerConn of them.
type subPool struct {
	g     *Gateway
	mu    sync.Mutex
	conns []*poolConn
}

// poolConn is one connection of the pool; its reader goroutine hands
// each delivery to the sink of its subscription (onEvent).
type poolConn struct {
	c     *client.Client
	sinks sync.Map // subscription id -> *sink
	n     int      // subscriptions (pool.mu)
	// The last event handed over and its encodings: an event matching
	// many subscriptions of the connection is encoded once per format
	// (onEvent runs on the connection's reader only).
	last         match.Event
	lastJSON     []byte
	lastCE       []byte
	seq          uint64 // numbers the CloudEvents of plain events (their id)
	sourceRouter string
}

// subscribe installs filter on a connection with room, dialling one when
// none has, and routes its deliveries to sk.
func (p *subPool) subscribe(ctx context.Context, filter string, sk *sink) (*client.Subscription, *poolConn, error) {
	pc, err := p.reserve(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Deliveries that beat the router's acknowledgement find no sink
	// and are dropped: the stream starts at its ": subscribed" comment,
	// and every event the router routes after acknowledging is delivered.
	s, err := pc.subscribeSink(ctx, filter, sk)
	if err != nil {
		p.release(pc)
		return nil, nil, err
	}
	return s, pc, nil
}

// reserve returns a live connection with room for one more subscription,
// counting it.
func (p *subPool) reserve(ctx context.Context) (*poolConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.g.ctx.Err() != nil {
		return nil, errors.New("the gateway is closed")
	}
	live := p.conns[:0]
	for _, pc := range p.conns {
		select {
		case <-pc.c.Done():
			continue // its sinks were ended by watch
		default:
			live = append(live, pc)
		}
	}
	clear(p.conns[len(live):])
	p.conns = live
	for _, pc := range p.conns {
		if pc.n < p.g.cfg.SubscriptionsPerConn {
			pc.n++
			return pc, nil
		}
	}
	pc := &poolConn{sourceRouter: "/sift/" + p.g.cfg.Router.Name()}
	opts := p.g.options("http-subscribe")
	opts.OnEvent = pc.onEvent
	c, err := client.Dial(ctx, p.g.addr, opts)
	if err != nil {
		return nil, fmt.Errorf("dial router %s: %w", p.g.addr, err)
	}
	pc.c = c
	pc.n = 1
	p.conns = append(p.conns, pc)
	go pc.watch()
	return pc, nil
}

// release uncounts a reserved subscription.
func (p *subPool) release(pc *poolConn) {
	p.mu.Lock()
	pc.n--
	p.mu.Unlock()
}

// subscribeSink subscribes and registers sk for the subscription's
// deliveries.
func (pc *poolConn) subscribeSink(ctx context.Context, filter string, sk *sink) (*client.Subscription, error) {
	s, err := pc.c.Subscribe(ctx, filter)
	if err != nil {
		return nil, err
	}
	pc.sinks.Store(s.ID(), sk)
	return s, nil
}

// unsubscribe removes a subscription of the connection (the HTTP client
// went away or fell behind).
func (pc *poolConn) unsubscribe(p *subPool, s *client.Subscription) {
	pc.sinks.Delete(s.ID())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pc.c.Unsubscribe(ctx, s); err != nil && !errors.Is(err, client.ErrClosed) && !errors.Is(err, client.ErrUnsubscribed) {
		p.g.log.Info("unsubscribe", "err", err)
	}
	p.release(pc)
}

// watch ends every sink of the connection once it ends.
func (pc *poolConn) watch() {
	<-pc.c.Done()
	err := pc.c.Err()
	if err == nil {
		err = client.ErrClosed
	}
	pc.sinks.Range(func(_, v any) bool {
		v.(*sink).end(err)
		return true
	})
}

// onEvent hands a delivery to its subscription's sink, encoded once per
// event and format.
func (pc *poolConn) onEvent(s *client.Subscription, e match.Event) {
	v, ok := pc.sinks.Load(s.ID())
	if !ok {
		return // before the acknowledgement, or unsubscribed meanwhile
	}
	sk := v.(*sink)
	if !e.Equal(pc.last) || pc.lastJSON == nil {
		pc.last, pc.lastJSON, pc.lastCE = e, nil, nil
	}
	if sk.ce {
		if pc.lastCE == nil {
			pc.seq++
			pc.lastCE = dataMessage(nil, "", appendCloudEvent(nil, e, fmt.Sprintf("sift-%d", pc.seq), pc.sourceRouter))
		}
		sk.push(pc.lastCE)
		return
	}
	if pc.lastJSON == nil {
		pc.lastJSON = dataMessage(nil, "", e.AppendJSON(nil))
	}
	sk.push(pc.lastJSON)
}

// dataMessage appends an SSE message: an id: line when id is set, and
// one data: line (JSON holds no raw newline).
func dataMessage(b []byte, id string, data []byte) []byte {
	if id != "" {
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	b = append(append(b, "data: "...), data...)
	return append(b, "\n\n"...)
}

// close closes every connection of the pool.
func (p *subPool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, pc := range p.conns {
		errs = append(errs, ignoreClosed(pc.c.Close()))
	}
	p.conns = nil
	return errors.Join(errs...)
}
