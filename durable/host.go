package durable

import "errors"

// Broker is the face every broker state machine shows its driver: Step
// with a message, Tick when a timer fires, both at time now, and Ready to
// collect the effects. Pubend, Router, SHB and Directory have it.
type Broker interface {
	Step(now Tick, env Envelope) error
	Tick(now Tick) error
	Ready() Ready
}

// Host is the group commit of a set of brokers sharing one store, written
// once for the router's driver and the simulator: Take collects every
// broker's Ready; without writes, the messages may leave at once; with
// writes, the driver applies the batch to the store (reads see it), syncs
// it, and calls Synced, which hands back the messages held for it. While
// a batch is being synced Take returns nothing, and Steps and Ticks
// accumulate in the brokers, so the next batch carries everything that
// came meanwhile. A Host does no I/O.
type Host struct {
	brokers  []Broker
	inFlight *HostBatch
	// failed: the batch in flight could not be written or synced (a full
	// disk); applied: its writes reached the store, only a sync is left.
	failed, applied bool
	failErr         error
	readies         []Ready // Take's scratch, one per broker
	// parts and ops are Take's scratch: the messages and writes of each
	// Ready, to join.
	parts [][]Envelope
	ops   [][]Op
}

// joinParts returns the parts in order as one slice: the only part that
// is not empty as it is (its broker handed it over; the most common case,
// one broker with messages, copies nothing), else a slice of the exact
// size (total, or counted when negative): a step that answers a long nack
// emits thousands of envelopes, and growing a slice by appends copied
// them several times.
func joinParts[T any](parts [][]T, total int) []T {
	var only []T
	filled := 0
	for _, p := range parts {
		if len(p) > 0 {
			only, filled = p, filled+1
		}
	}
	if filled <= 1 {
		return only
	}
	if total < 0 {
		total = 0
		for _, p := range parts {
			total += len(p)
		}
	}
	out := make([]T, 0, total)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Deferrer is a broker with writes it may hold back: progress that a
// crash may forget at no cost but a repeated message (an idle SHB's LD, a
// pubend's release over silent ticks and the reports it took; see their
// doc comments for why each is safe). Its Ready leaves them out unless it
// has writes of its own or they have waited too long, and Host asks for
// them with Deferred whenever another broker's writes are to be synced
// anyway, so they cost no sync of their own.
type Deferrer interface {
	// Deferred returns the writes held back (nil: none) and counts them as
	// handed to the driver, exactly as if Ready had returned them.
	Deferred() *Batch
}

// HostBatch is the writes of one group commit and the messages that may
// leave once they are synced.
type HostBatch struct {
	Writes Batch
	Msgs   []Envelope
}

// NewHost returns a host of brokers, whose Readies are taken in this
// order.
func NewHost(brokers ...Broker) *Host { return &Host{brokers: brokers} }

// SetBrokers replaces the brokers (one was recreated); a batch in flight
// stays.
func (h *Host) SetBrokers(brokers ...Broker) { h.brokers = brokers }

// Take collects the brokers' Readies unless a batch is in flight. It
// returns the batch to apply and sync (nil if there are no writes) and the
// messages that may leave now: the Readies' early ones, and all the
// others too when there are no writes. A batch with writes carries every
// Deferrer's held-back writes too.
func (h *Host) Take() (*HostBatch, []Envelope) {
	if h.inFlight != nil {
		return nil, nil
	}
	b := &HostBatch{}
	if cap(h.readies) < len(h.brokers) {
		h.readies = make([]Ready, len(h.brokers))
	}
	readies := h.readies[:len(h.brokers)]
	msgs, early, writes := 0, 0, false
	for i, br := range h.brokers {
		readies[i] = br.Ready()
		msgs, early = msgs+len(readies[i].Msgs), early+len(readies[i].Early)
		writes = writes || (readies[i].Writes != nil && !readies[i].Writes.Empty())
	}
	// Without writes the messages leave at once too, after every Early.
	early0 := len(h.parts)
	for _, rd := range readies {
		h.parts = append(h.parts, rd.Early)
	}
	msgs0 := len(h.parts)
	for _, rd := range readies {
		h.parts = append(h.parts, rd.Msgs)
	}
	var now []Envelope
	if writes {
		now = joinParts(h.parts[early0:msgs0], early)
		b.Msgs = joinParts(h.parts[msgs0:], msgs)
		for _, rd := range readies {
			if rd.Writes != nil {
				h.ops = append(h.ops, rd.Writes.Ops)
			}
		}
		b.Writes.Ops = joinParts(h.ops, -1)
	} else {
		now = joinParts(h.parts[early0:], early+msgs)
	}
	clear(h.parts)
	clear(h.ops)
	h.parts, h.ops = h.parts[:0], h.ops[:0]
	clear(readies)
	if !writes {
		return nil, now
	}
	for _, br := range h.brokers {
		if d, ok := br.(Deferrer); ok {
			if w := d.Deferred(); w != nil {
				b.Writes.Ops = append(b.Writes.Ops, w.Ops...)
			}
		}
	}
	h.inFlight = b
	return b, now
}

// InFlight returns the batch being synced, or nil.
func (h *Host) InFlight() *HostBatch { return h.inFlight }

// Synced records that the batch in flight is durable and returns its
// messages.
func (h *Host) Synced() []Envelope {
	b := h.inFlight
	h.inFlight, h.failed, h.applied, h.failErr = nil, false, false, nil
	if b == nil {
		return nil
	}
	return b.Msgs
}

// Lost forgets the batch in flight without its messages (the broker
// crashed during the sync: what it held is never sent).
func (h *Host) Lost() { h.inFlight, h.failed, h.applied, h.failErr = nil, false, false, nil }

// A store that fails to write or sync (a full disk) stops durable
// publishing, not the driver: the batch in flight stays, with the
// messages held for it, and is retried; meanwhile Take returns nothing
// (the brokers keep accumulating input) and the driver answers durable
// publishes with Refusal. The router's driver and the simulator both do
// this through the methods below.

// Fail records that the batch in flight could not be applied to the store
// (applied false) or synced (applied true), with the store's error.
func (h *Host) Fail(applied bool, err error) {
	if h.inFlight == nil {
		return
	}
	if err == nil {
		err = errors.New("store failed")
	}
	h.failed, h.applied, h.failErr = true, h.applied || applied, err
}

// Failing returns the error of the batch that waits for a retry, or nil.
func (h *Host) Failing() error {
	if !h.failed {
		return nil
	}
	return h.failErr
}

// Retry returns the failed batch and whether its writes are applied
// already. The driver applies them if not (then calls Applied), syncs,
// and calls Synced; on another failure, Fail again.
func (h *Host) Retry() (b *HostBatch, applied bool) {
	if !h.failed {
		return nil, false
	}
	return h.inFlight, h.applied
}

// Applied records that a retried batch's writes reached the store.
func (h *Host) Applied() { h.applied = true }

// Refusal answers a durable publish while a batch is failing or the
// driver knows the store cannot take more (reason): it acknowledges
// nothing, and a publisher holds back and resends.
func Refusal(env Envelope, reason string) Envelope {
	return Envelope{From: env.To, To: env.From,
		Msg: Msg{Kind: MsgPubRefused, Publisher: env.Msg.Publisher, Reason: reason}}
}
