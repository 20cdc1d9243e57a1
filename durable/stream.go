package durable

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/sift-pubsub/sift/match"
)

// Stream is a knowledge stream of one pubend: the state of every tick,
// range-compressed. Ticks at or below Base are outside the stream (consumed
// or forgotten); ticks at or below Lost are L; known ticks above both are
// held as runs of S and single D ticks with their events; every other tick
// is Q. The zero Stream starts at tick 0 with everything above it Q.
type Stream struct {
	base Tick
	lost Tick
	runs []run // sorted, disjoint, all above floor(); adjacent S runs merged
	// arr is the whole array runs lies in, from runs[0]'s slot head
	// onward: runs == arr[head:head+len(runs)]. The slots before head,
	// freed by runs dropped from the front, let a run inserted near the
	// front move the runs before it down instead of every run after it
	// up. A stream that fills a hole below many known runs (an SHB
	// fetching a long outage while the newest knowledge is already in)
	// inserts just above its front at every message: each insert then
	// costs the few runs before it, not the thousands after it.
	arr  []run
	head int
}

// run is a maximal range of one known state: S over [from, to], or D at a
// single tick with its event.
type run struct {
	from, to Tick
	state    State
	event    match.Event
}

// NewStream returns a stream whose ticks at or below base are outside it.
func NewStream(base Tick) *Stream { return &Stream{base: base} }

// Base returns the highest tick outside the stream.
func (s *Stream) Base() Tick { return s.base }

// Lost returns the L prefix: every tick at or below it is L.
func (s *Stream) Lost() Tick { return s.lost }

// floor is the highest tick whose state the runs do not hold.
func (s *Stream) floor() Tick { return max(s.base, s.lost) }

// Get returns the state of tick t and, for D, its event. Ticks at or below
// Base report Q unless they are L.
func (s *Stream) Get(t Tick) (State, match.Event) {
	if t <= s.lost {
		return L, match.Event{}
	}
	if t <= s.base {
		return Q, match.Event{}
	}
	i := s.search(t)
	if i < len(s.runs) && s.runs[i].from <= t {
		return s.runs[i].state, s.runs[i].event
	}
	return Q, match.Event{}
}

// search returns the index of the first run ending at or after t.
func (s *Stream) search(t Tick) int {
	i, _ := slices.BinarySearchFunc(s.runs, t, func(r run, t Tick) int {
		switch {
		case r.to < t:
			return -1
		case r.from > t:
			return 1
		}
		return 0
	})
	return i
}

// AddSilence records that ticks [from, to] are S and returns the ranges
// that were Q before (the new knowledge). Ticks already S, D or L keep their
// state: the first knowledge of a tick wins.
func (s *Stream) AddSilence(from, to Tick) []Range {
	qs := s.qRanges(Range{from, to})
	for _, q := range qs {
		s.insert(run{from: q.From, to: q.To, state: S})
	}
	return qs
}

// AddData records that tick t is D with event e and reports whether it was
// Q before.
func (s *Stream) AddData(t Tick, e match.Event) bool {
	if st, _ := s.Get(t); st != Q || t <= s.base {
		return false
	}
	s.insert(run{from: t, to: t, state: D, event: e})
	return true
}

// AddLost records that every tick at or below upto is L and reports whether
// the L prefix grew.
func (s *Stream) AddLost(upto Tick) bool {
	if upto <= s.lost {
		return false
	}
	s.lost = upto
	s.dropThrough(s.floor())
	return true
}

// Advance moves Base up to upto: ticks at or below it leave the stream.
func (s *Stream) Advance(upto Tick) {
	if upto <= s.base {
		return
	}
	s.base = upto
	s.dropThrough(s.floor())
}

// dropThrough removes runs at or below t, trimming one that straddles it.
func (s *Stream) dropThrough(t Tick) {
	i := 0
	for i < len(s.runs) && s.runs[i].to <= t {
		i++
	}
	// Reslice rather than copy the rest down: streams drop from the front
	// at every step (a router's cache trims its oldest run per message),
	// and copying thousands of runs each time was most of a message's
	// cost. The dropped runs are zeroed so their events are not kept; the
	// array is compacted when append grows it.
	clear(s.runs[:i])
	s.runs = s.runs[i:]
	s.head += i
	if len(s.runs) > 0 && s.runs[0].from <= t {
		s.runs[0].from = t + 1
	}
}

// insert adds a run over ticks known to be Q and merges adjacent S runs.
// An S run that touches an S neighbour extends it instead of being
// inserted, so only a run that fills the gap between two S runs removes
// one.
func (s *Stream) insert(r run) {
	i := s.search(r.from)
	if r.state == S {
		joinsNext := i < len(s.runs) && s.runs[i].state == S && s.runs[i].from == r.to+1
		joinsPrev := i > 0 && s.runs[i-1].state == S && s.runs[i-1].to+1 == r.from
		switch {
		case joinsPrev && joinsNext:
			s.runs[i-1].to = s.runs[i].to
			s.removeAt(i)
			return
		case joinsPrev:
			s.runs[i-1].to = r.to
			return
		case joinsNext:
			s.runs[i].from = r.from
			return
		}
	}
	s.insertAt(i, r)
}

// insertAt puts r at index i, moving whichever side of i is shorter and
// has room: the runs before i down into the free slots at the front, or
// the runs from i up.
func (s *Stream) insertAt(i int, r run) {
	n := len(s.runs)
	if s.head > 0 && i <= n/2 {
		copy(s.arr[s.head-1:], s.arr[s.head:s.head+i])
		s.head--
		s.arr[s.head+i] = r
		s.runs = s.arr[s.head : s.head+n+1]
		return
	}
	before := cap(s.runs)
	s.runs = slices.Insert(s.runs, i, r)
	if cap(s.runs) != before || s.arr == nil {
		s.arr, s.head = s.runs[:cap(s.runs)], 0 // a new array
	}
}

// removeAt removes the run at index i, moving whichever side is shorter.
func (s *Stream) removeAt(i int) {
	n := len(s.runs)
	if i < n/2 {
		copy(s.runs[1:i+1], s.runs[:i])
		s.runs[0] = run{}
		s.runs = s.runs[1:]
		s.head++
		return
	}
	s.runs = slices.Delete(s.runs, i, i+1)
}

// qRanges returns the Q sub-ranges of r, in order.
func (s *Stream) qRanges(r Range) []Range {
	r.From = max(r.From, s.floor()+1)
	if r.Empty() {
		return nil
	}
	var out []Range
	next := r.From
	for i := s.search(r.From); i < len(s.runs) && s.runs[i].from <= r.To; i++ {
		if s.runs[i].from > next {
			out = append(out, Range{next, s.runs[i].from - 1})
		}
		next = s.runs[i].to + 1
	}
	if next <= r.To {
		out = append(out, Range{next, r.To})
	}
	return out
}

// Highest returns the highest tick whose state is known (S, D or L), or
// the floor of the stream if none above it is.
func (s *Stream) Highest() Tick {
	if len(s.runs) == 0 {
		return s.floor()
	}
	return s.runs[len(s.runs)-1].to
}

// DoubtHorizon returns the highest tick h such that no tick in the stream
// up to h is Q.
func (s *Stream) DoubtHorizon() Tick {
	h := s.floor()
	for _, r := range s.runs {
		if r.from != h+1 {
			break
		}
		h = r.to
	}
	return h
}

// Curiosity returns the Q ranges below the highest known tick: the ticks
// to nack.
func (s *Stream) Curiosity() []Range {
	return s.qRanges(Range{s.floor() + 1, s.Highest()})
}

// QRanges returns the Q sub-ranges of r.
func (s *Stream) QRanges(r Range) []Range { return s.qRanges(r) }

// Segment is a maximal range of ticks of one state, as Segments reports
// them; Event is set for D.
type Segment struct {
	Range
	State State
	Event match.Event
}

// Segments returns the states of the ticks in r, in order, with Q for
// unknown ticks and L for the L prefix. Ticks at or below Base that are not
// L are reported as Q.
func (s *Stream) Segments(r Range) []Segment {
	var out []Segment
	if r.Empty() {
		return nil
	}
	if r.From <= s.lost {
		out = append(out, Segment{Range: Range{r.From, min(r.To, s.lost)}, State: L})
		r.From = s.lost + 1
	}
	if r.From <= s.base && !r.Empty() {
		out = append(out, Segment{Range: Range{r.From, min(r.To, s.base)}, State: Q})
		r.From = s.base + 1
	}
	next := r.From
	for i := s.search(r.From); i < len(s.runs) && s.runs[i].from <= r.To && next <= r.To; i++ {
		ru := s.runs[i]
		if ru.from > next {
			out = append(out, Segment{Range: Range{next, ru.from - 1}, State: Q})
		}
		seg := Segment{Range: Range{max(ru.from, next), min(ru.to, r.To)}, State: ru.state, Event: ru.event}
		out = append(out, seg)
		next = seg.To + 1
	}
	if next <= r.To {
		out = append(out, Segment{Range: Range{next, r.To}, State: Q})
	}
	return out
}

// String renders the stream for tests and traces, e.g.
// "base=0 lost=0 S[1,4] D5{"x":1} horizon=5".
func (s *Stream) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "base=%d lost=%d", s.base, s.lost)
	for _, r := range s.runs {
		if r.state == D {
			fmt.Fprintf(&b, " D%d%s", r.from, r.event)
		} else {
			fmt.Fprintf(&b, " S[%d,%d]", r.from, r.to)
		}
	}
	fmt.Fprintf(&b, " horizon=%d", s.DoubtHorizon())
	if c := s.Curiosity(); len(c) > 0 {
		fmt.Fprintf(&b, " curiosity=%v", c)
	}
	return b.String()
}

// runCount returns the number of runs held (a measure of memory).
func (s *Stream) runCount() int { return len(s.runs) }

// trimRuns forgets the oldest runs, raising Base, so that at most n remain.
func (s *Stream) trimRuns(n int) {
	if len(s.runs) > n {
		s.Advance(s.runs[len(s.runs)-n-1].to)
	}
}

// mergeRanges sorts ranges and merges overlapping or adjacent ones.
func mergeRanges(rs []Range) []Range {
	slices.SortFunc(rs, func(a, b Range) int { return cmp.Compare(a.From, b.From) })
	var out []Range
	for _, r := range rs {
		if r.Empty() {
			continue
		}
		if n := len(out); n > 0 && r.From <= out[n-1].To+1 {
			out[n-1].To = max(out[n-1].To, r.To)
			continue
		}
		out = append(out, r)
	}
	return out
}
