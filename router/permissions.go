package router

import (
	"fmt"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/perm"
)

// Content-based permissions (router/perm): with Config.Permissions set,
// a client, known by its certificate's name, may subscribe only within
// its subscribe filter and publish only events matching its publish
// filter. The checks run in the connection's readers, where requests
// enter, before anything reaches the matching loop:
//
//   - a subscription or advertisement outside the client's filter is
//     refused alone, with a CodeForbidden error frame saying why; the
//     connection and its other subscriptions stay;
//   - a publish batch with an event outside the publish filter is refused
//     whole and the connection closed with CodeForbidden naming the event
//     (a batch is acknowledged as a unit, so no part of it can be
//     accepted), as is a durable subscription or durable publish outside
//     the filters (the durable protocols have no per-request refusal).
//
// Links are not checked (their routers checked their own clients), nor a
// connection presenting this router's own certificate (its HTTP gateway,
// which checks its users against the same table).

// SetPermissions replaces the permissions table (nil: everything allowed)
// for every request from now on; siftd calls it on SIGHUP. Subscriptions
// already installed stay.
func (r *Router) SetPermissions(t *perm.Table) { r.perms.Store(t) }

// Permissions returns the table in force (nil: everything allowed), for
// components that check their own users, such as the HTTP gateway.
func (r *Router) Permissions() *perm.Table { return r.perms.Load() }

// permitControl checks a control frame of client c. It returns refused
// when it answered the frame with an error frame itself (the reader skips
// it), or a fatal error that closes the connection.
func (r *Router) permitControl(c *conn, m wire.Message) (refused bool, fatal error) {
	if s, ok := m.(*wire.Subscribe); ok && len(s.Filter) > wire.MaxFilterLen {
		// Not a permission, but refused here too, alone, before the loop
		// and the links (which bound filters) see it.
		return r.refuseCode(c, wire.CodeBadFilter, wire.TypeSubscribe, s.ID,
			fmt.Errorf("filter of %d bytes exceeds the limit of %d", len(s.Filter), wire.MaxFilterLen)), nil
	}
	t := r.perms.Load()
	if t == nil || c.self {
		return false, nil
	}
	switch m := m.(type) {
	case *wire.Subscribe:
		f, err := match.Parse(m.Filter)
		if err != nil {
			return false, nil // the loop refuses it as a bad filter
		}
		if err := t.Subscribe(c.ident.Name, f); err != nil {
			return r.refuse(c, wire.TypeSubscribe, m.ID, err), nil
		}
	case *wire.Advertise:
		f, err := match.Parse(m.Filter)
		if err != nil {
			return false, nil
		}
		if err := t.Advertise(c.ident.Name, f); err != nil {
			return r.refuse(c, wire.TypeAdvertise, m.ID, err), nil
		}
	case *wire.Durable:
		switch m.Msg.Kind {
		case durable.MsgResume:
			if err := t.Subscribe(c.ident.Name, m.Msg.Filter); err != nil {
				return false, wire.Errorf(wire.CodeForbidden, "durable subscription %q refused: %v", m.Msg.Sub, err)
			}
		case durable.MsgPublish:
			if err := t.Publish(c.ident.Name, m.Msg.Event); err != nil {
				return false, wire.Errorf(wire.CodeForbidden, "durable publish %d refused: event %s: %v", m.Msg.Seq, m.Msg.Event, err)
			}
		}
	}
	return false, nil
}

// refuse answers a request with a non-fatal CodeForbidden error frame.
func (r *Router) refuse(c *conn, about wire.Type, ref uint64, err error) bool {
	return r.refuseCode(c, wire.CodeForbidden, about, ref, err)
}

// refuseCode answers a request with a non-fatal error frame of code.
func (r *Router) refuseCode(c *conn, code wire.Code, about wire.Type, ref uint64, err error) bool {
	r.metrics.Errors.WithLabelValues(code.String()).Inc()
	c.log.Info("request refused", "type", about, "id", ref, "code", code, "err", err)
	c.q.pushControl(wire.AppendFrame(nil, &wire.Error{Code: code, About: about, Ref: ref, Msg: err.Error()}))
	return true
}

// permitPublish checks every event of client c's publish batch against
// its publish filter. The batch was decoded keeping only the attributes
// the router's filters name, so each event is checked in full, decoded
// again from its raw bytes.
func (r *Router) permitPublish(c *conn, p *wire.Publish) error {
	t := r.perms.Load()
	if t == nil || c.self {
		return nil
	}
	for i, raw := range p.RawAll() {
		ev, err := wire.DecodeEvent(raw)
		if err != nil {
			return err
		}
		if err := t.Publish(c.ident.Name, ev); err != nil {
			return wire.Errorf(wire.CodeForbidden, "publish batch %d refused: event %d %s: %v", p.Seq, i, ev, err)
		}
	}
	return nil
}
