package durable

import (
	"fmt"

	"github.com/sift-pubsub/sift/match"
)

// logRecord is one entry of a pubend's event log.
type logRecord struct {
	Publisher string
	Seq       uint64
	Event     match.Event
}

const recordV1 = 1

func (r logRecord) encode() []byte {
	e := encoder{}
	e.Byte(recordV1)
	e.Str(r.Publisher)
	e.Uvarint(r.Seq)
	e.appendEventBody(r.Event)
	return e.B
}

func decodeLogRecord(b []byte) (logRecord, error) {
	d := newDecoder(b)
	if v := d.Byte(); d.Err == nil && v != recordV1 {
		return logRecord{}, fmt.Errorf("log record: unknown version %d", v)
	}
	r := logRecord{Publisher: d.Str(), Seq: d.Uvarint()}
	ev, err := d.eventBody()
	if err == nil {
		err = d.Done()
	}
	if err != nil {
		return logRecord{}, fmt.Errorf("log record: %w", err)
	}
	r.Event = ev
	return r, nil
}

// DecodeLogRecord decodes a PHB log value into its publisher, sequence and
// event (for tools and the simulator's oracle).
func DecodeLogRecord(b []byte) (publisher string, seq uint64, e match.Event, err error) {
	r, err := decodeLogRecord(b)
	return r.Publisher, r.Seq, r.Event, err
}

// encodeTicks encodes a short list of ticks or counters.
func encodeTicks(ts ...Tick) []byte {
	e := encoder{}
	e.Byte(recordV1)
	for _, t := range ts {
		e.tick(t)
	}
	return e.B
}

// decodeTicks decodes exactly n values written by encodeTicks.
func decodeTicks(b []byte, n int) ([]Tick, error) {
	d := newDecoder(b)
	if v := d.Byte(); d.Err == nil && v != recordV1 {
		return nil, fmt.Errorf("unknown record version %d", v)
	}
	ts := make([]Tick, n)
	for i := range ts {
		ts[i] = d.tick()
	}
	if err := d.Done(); err != nil {
		return nil, err
	}
	return ts, nil
}

// getTicks reads a record of n ticks; a missing key reads as zeros.
func getTicks(get func([]byte) ([]byte, bool, error), key []byte, n int) ([]Tick, error) {
	v, ok, err := get(key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return make([]Tick, n), nil
	}
	ts, err := decodeTicks(v, n)
	if err != nil {
		return nil, fmt.Errorf("key %x: %w", key, err)
	}
	return ts, nil
}

// PHBMetaKey returns the key of pubend p's metadata record (for tools and
// the simulator's oracle).
func PHBMetaKey(p string) []byte { return phbMetaKey(p) }

// DecodePHBMeta decodes a pubend metadata record: the persisted high-water
// mark and L prefix.
func DecodePHBMeta(v []byte) (mark, lost Tick, err error) {
	ts, err := decodeTicks(v, 2)
	if err != nil {
		return 0, 0, fmt.Errorf("pubend meta: %w", err)
	}
	return ts[0], ts[1], nil
}
