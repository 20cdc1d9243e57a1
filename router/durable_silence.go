package router

import (
	"cmp"
	"slices"

	"github.com/sift-pubsub/sift/durable"
)

// A silence only moves a subscriber's CT, so one for a client whose
// control lane is backed up (maxSilenceBacklog frames) gains nothing by
// joining the queue. It is not dropped either: the SHB has recorded it as
// sent (the session's CT, which its idle silences and its join to the
// constream go by), and a dropped one left the subscriber's CT below
// what the SHB believes it conveyed, until some later message happened
// to carry it further. The driver holds the newest silence per client,
// subscription and pubend instead, and sends it once the lane has room
// (retryHeldSilences, at every send); a later message to the same
// subscription and pubend conveys at least as much (the SHB's messages to
// a session are in tick order), so it replaces the held silence, and a
// session's start replaces all of the subscription's.

// silenceKey names a held silence: the client connection, the
// subscription and the pubend.
type silenceKey struct {
	client ifaceID
	sub    string
	pubend string
}

// holdSilence keeps env, a silence for client id, until the lane has
// room; it replaces an older one held for the same subscription and
// pubend.
func (d *durableNode) holdSilence(id ifaceID, env durable.Envelope) {
	if d.heldSilences == nil {
		d.heldSilences = map[silenceKey]durable.Envelope{}
	}
	d.heldSilences[silenceKey{id, env.Msg.Sub, env.Msg.Pubend}] = env
	d.met.silencesHeld.Inc()
}

// supersedeSilence forgets the silences held for the subscription of m,
// a message about to be queued for client id: m conveys at least as
// much on its pubend (a start, on every pubend).
func (d *durableNode) supersedeSilence(id ifaceID, m durable.Msg) {
	if len(d.heldSilences) == 0 {
		return
	}
	if m.Kind != durable.MsgStart {
		delete(d.heldSilences, silenceKey{id, m.Sub, m.Pubend})
		return
	}
	for k := range d.heldSilences {
		if k.client == id && k.sub == m.Sub {
			delete(d.heldSilences, k)
		}
	}
}

// retryHeldSilences queues every held silence whose client's lane has
// room again, in a fixed order, and forgets those of clients gone.
func (d *durableNode) retryHeldSilences() {
	if len(d.heldSilences) == 0 {
		return
	}
	keys := make([]silenceKey, 0, len(d.heldSilences))
	for k := range d.heldSilences {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b silenceKey) int {
		return cmp.Or(cmp.Compare(a.client, b.client), cmp.Compare(a.sub, b.sub), cmp.Compare(a.pubend, b.pubend))
	})
	for _, k := range keys {
		d.mu.Lock()
		cl := d.clients[k.client]
		d.mu.Unlock()
		if cl == nil {
			delete(d.heldSilences, k)
			continue
		}
		if ctrl, _ := cl.c.q.pending(); ctrl >= maxSilenceBacklog {
			continue
		}
		env := d.heldSilences[k]
		delete(d.heldSilences, k)
		d.met.countToClient(env.Msg)
		d.queueClient(k.client, cl, forClient(cl.c, env.Msg))
	}
}
