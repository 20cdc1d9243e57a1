package httpapi

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/sift-pubsub/sift/match"
)

// publish serves POST /v1/publish: it decodes the whole body (by its
// Content-Type, see decodeBody), checks every event against the client's
// publish permission, and only then publishes them all and waits until
// the router accepted them (with ?durable=1: until they are logged and
// synced at the pubend). It answers {"accepted":N}.
func (g *Gateway) publish(w http.ResponseWriter, r *http.Request, clientName string) {
	durable, err := boolParam(r, "durable")
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error(), nil)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.cfg.MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body exceeds %d bytes", tooBig.Limit), nil)
			return
		}
		httpError(w, http.StatusBadRequest, "reading the body: "+err.Error(), nil)
		return
	}
	events, err := decodeBody(r.Header, body)
	if err != nil {
		badRequest(w, err)
		return
	}
	if err := g.permitPublish(clientName, events); err != nil {
		httpError(w, http.StatusForbidden, err.Error(), nil)
		return
	}
	if durable {
		err = g.publishDurable(r, events)
	} else {
		err = g.publishPlain(r, events)
	}
	if err != nil {
		g.log.Warn("publish failed", "client", clientName, "events", len(events), "err", err)
		httpError(w, http.StatusServiceUnavailable, "publish: "+err.Error(), nil)
		return
	}
	g.stats.published.Add(uint64(len(events)))
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, "{\"accepted\":%d}\n", len(events))
}

// decodeBody decodes a publish body by its media type: CloudEvents in
// structured mode (one, or a batch as a JSON array), application/json (one
// or more JSON objects), a binary-mode CloudEvent (a ce-specversion
// header, any content type), and otherwise JSON Lines.
func decodeBody(h http.Header, body []byte) ([]match.Event, error) {
	if h.Get("Ce-Specversion") != "" {
		ev, err := decodeBinary(h, body)
		if err != nil {
			return nil, err
		}
		return []match.Event{ev}, nil
	}
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	switch mt {
	case ceJSON:
		ev, err := decodeStructured(1, body)
		if err != nil {
			return nil, err
		}
		return []match.Event{ev}, nil
	case ceBatchJSON:
		return decodeBatch(body)
	case "application/json":
		return decodeJSONStream(body)
	}
	return decodeLines(body)
}

// badRequest answers a decoding error: a BadEventError with its line and
// attribute.
func badRequest(w http.ResponseWriter, err error) {
	var be *BadEventError
	if !errors.As(err, &be) {
		httpError(w, http.StatusBadRequest, err.Error(), nil)
		return
	}
	extra := map[string]any{}
	if be.Line > 0 {
		extra["line"] = be.Line
	}
	if be.Attribute != "" {
		extra["attribute"] = be.Attribute
	}
	httpError(w, http.StatusBadRequest, be.Error()+"; nothing of this request was published", extra)
}

// permitPublish checks every event against the client's permission.
func (g *Gateway) permitPublish(clientName string, events []match.Event) error {
	p := g.permit()
	if p == nil {
		return nil
	}
	for i, ev := range events {
		if err := p.Publish(clientName, ev); err != nil {
			return fmt.Errorf("event %d: client %s may not publish it: %w; nothing of this request was published", i+1, clientName, err)
		}
	}
	return nil
}

// publishPlain publishes on the shared connection and waits until the
// router accepted everything published so far.
func (g *Gateway) publishPlain(r *http.Request, events []match.Event) error {
	c, err := g.publisher(r.Context())
	if err != nil {
		return err
	}
	if err := c.Publish(r.Context(), events...); err != nil {
		return err
	}
	return c.Flush(r.Context())
}

// publishDurable publishes to the pubend and waits until it logged and
// synced every event.
func (g *Gateway) publishDurable(r *http.Request, events []match.Event) error {
	dp, err := g.durablePublisher(r.Context())
	if err != nil {
		return err
	}
	for _, ev := range events {
		if _, err := dp.Publish(r.Context(), ev); err != nil {
			return err
		}
	}
	return dp.Flush(r.Context())
}

// boolParam reads a query parameter that is absent, 0/false or 1/true.
func boolParam(r *http.Request, name string) (bool, error) {
	switch v := r.URL.Query().Get(name); v {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	default:
		return false, fmt.Errorf("?%s=%q: want 1 or 0", name, v)
	}
}
