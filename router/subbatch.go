package router

import (
	"fmt"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/core"
)

// subBatch is a SubscribeBatch as the connection's reader hands it to the
// matching loop: its filters parsed there, off the loop, or the first
// parse error.
type subBatch struct {
	first   uint64
	filters []match.Filter
	err     error // a *wire.ProtocolError naming the filter; nil: all parsed
}

// parseBatch parses a batch's filters; the first malformed one refuses the
// whole batch (CodeBadFilter, naming its position and column).
func parseBatch(m *wire.SubscribeBatch) *subBatch {
	b := &subBatch{first: m.First, filters: make([]match.Filter, len(m.Filters))}
	for i, text := range m.Filters {
		f, err := match.ParseCompact(text) // held for the subscription's life
		if err != nil {
			b.filters, b.err = nil, wire.Errorf(wire.CodeBadFilter, "filter %d of the batch (id %d): %s", i, m.First+uint64(i), err)
			return b
		}
		b.filters[i] = f
	}
	return b
}

// input is the batch as the core's input: installed in the engine and,
// with a mesh, in the mesh (the client's one Ack, About TypeSubscribeBatch
// and ID first, then waits for the batch's mesh Ready); a batch that did
// not parse is refused with one Error frame and installs nothing.
func (b *subBatch) input(conn ifaceID) core.SubscribeBatch {
	return core.SubscribeBatch{Conn: conn, First: b.first, Filters: b.filters, Refused: b.err}
}

// permitBatch checks every filter of client c's parsed batch against its
// subscribe filter (permissions.go); the first one not covered refuses the
// whole batch with one CodeForbidden error frame naming it, and permitBatch
// reports true. A batch that did not parse is left to the loop's refusal.
func (r *Router) permitBatch(c *conn, b *subBatch) bool {
	t := r.perms.Load()
	if t == nil || c.self || b.err != nil {
		return false
	}
	for i, f := range b.filters {
		if err := t.Subscribe(c.ident.Name, f); err != nil {
			return r.refuse(c, wire.TypeSubscribeBatch, b.first, fmt.Errorf("filter %d of the batch (id %d): %w", i, b.first+uint64(i), err))
		}
	}
	return false
}
