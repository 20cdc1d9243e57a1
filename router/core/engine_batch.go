package core

import (
	"fmt"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// SubscribeBatch installs filters under (iface, first), (iface, first+1),
// ... all or none: an id already in use or more subscriptions than the
// interface's limit is a *wire.ProtocolError (the message names the id)
// and installs nothing. The filters are parsed already (the connection's
// reader parses a batch, off the matching loop). Each fs[i] installed is
// replaced by the engine's copy of that filter (one per distinct filter,
// shared with its other subscriptions), which the caller passes on.
func (e *Engine) SubscribeBatch(id ifaceID, first uint64, fs []match.Filter) error {
	st, ok := e.Ifaces[id]
	if !ok {
		return fmt.Errorf("subscribe batch on unknown interface %d", id)
	}
	for i := range fs {
		if _, dup := st.subs.Get(first + uint64(i)); dup {
			return wire.Errorf(wire.CodeDuplicateSubscription, "subscription id %d (filter %d of the batch) is already in use", first+uint64(i), i)
		}
	}
	if e.maxSubs > 0 && st.subs.Len()+len(fs) > e.maxSubs {
		return wire.Errorf(wire.CodeTooManySubscriptions, "connection has %d subscriptions; %d more exceed the limit of %d", st.subs.Len(), len(fs), e.maxSubs)
	}
	for i := range fs {
		x := e.newID()
		slot := e.pool.intern(fs[i])
		f := e.pool.filter(slot)
		if err := e.idx.Insert(x, f); err != nil {
			e.pool.release(slot)
			e.free = append(e.free, x)
			for j := range i { // undo: all or none
				x, _ := st.subs.Delete(first + uint64(j))
				e.mustDelete(x)
			}
			return fmt.Errorf("index insert: %w", err)
		}
		st.subs.Put(first+uint64(i), x)
		*e.owner.at(x) = subRef{iface: st, sub: first + uint64(i), filter: slot}
		e.listCopy(x)
		fs[i] = f
		if e.OnFilter != nil {
			e.OnFilter(f)
		}
	}
	e.touch()
	return nil
}

// UnsubscribeBatch removes what SubscribeBatch installed (the mesh refused
// the batch).
func (e *Engine) UnsubscribeBatch(id ifaceID, first uint64, n int) {
	for i := range n {
		e.Unsubscribe(id, first+uint64(i))
	}
}
