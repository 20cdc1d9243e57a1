package durable

import "fmt"

// Tick is a pubend timestamp in microseconds. Ticks of one pubend are
// strictly increasing and never reused; tick 0 is before every event.
type Tick int64

// MaxTick is the largest tick.
const MaxTick = Tick(1<<63 - 1)

// State is the knowledge a stream holds about one tick.
type State uint8

// The tick states. Q may become S, D or L; S and D may become L; nothing
// else changes.
const (
	// Q: unknown.
	Q State = iota
	// S: silence (no event, or an event filtered out for this link).
	S
	// D: data, an event.
	D
	// L: lost, released by the pubend.
	L
)

// String returns the state's letter.
func (s State) String() string {
	switch s {
	case Q:
		return "Q"
	case S:
		return "S"
	case D:
		return "D"
	case L:
		return "L"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Range is an inclusive range of ticks [From, To]; it is empty when From >
// To.
type Range struct {
	From, To Tick
}

// Empty reports whether r holds no tick.
func (r Range) Empty() bool { return r.From > r.To }

// Contains reports whether t is in r.
func (r Range) Contains(t Tick) bool { return r.From <= t && t <= r.To }

// Intersect returns the ticks in both r and o (possibly empty).
func (r Range) Intersect(o Range) Range {
	return Range{From: max(r.From, o.From), To: min(r.To, o.To)}
}

// String renders r as [From,To].
func (r Range) String() string { return fmt.Sprintf("[%d,%d]", r.From, r.To) }
