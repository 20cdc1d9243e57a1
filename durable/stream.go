package durable

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
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
	runs runs // sorted, disjoint, all above floor(); adjacent S runs merged
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
	if i := s.search(t); i < s.runs.len() && s.runs.at(i).from <= t {
		r := s.runs.at(i)
		return r.state, r.event
	}
	return Q, match.Event{}
}

// search returns the index of the first run ending at or after t.
func (s *Stream) search(t Tick) int {
	return sort.Search(s.runs.len(), func(i int) bool { return s.runs.at(i).to >= t })
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
	for i < s.runs.len() && s.runs.at(i).to <= t {
		i++
	}
	s.runs.dropFront(i)
	if s.runs.len() > 0 && s.runs.at(0).from <= t {
		s.runs.at(0).from = t + 1
	}
}

// insert adds a run over ticks known to be Q and merges adjacent S runs.
// An S run that touches an S neighbour extends it instead of being
// inserted, so only a run that fills the gap between two S runs removes
// one.
func (s *Stream) insert(r run) {
	i := s.search(r.from)
	if r.state == S {
		var prev, next *run
		if i > 0 {
			prev = s.runs.at(i - 1)
		}
		if i < s.runs.len() {
			next = s.runs.at(i)
		}
		joinsNext := next != nil && next.state == S && next.from == r.to+1
		joinsPrev := prev != nil && prev.state == S && prev.to+1 == r.from
		switch {
		case joinsPrev && joinsNext:
			prev.to = next.to
			s.runs.remove(i)
			return
		case joinsPrev:
			prev.to = r.to
			return
		case joinsNext:
			next.from = r.from
			return
		}
	}
	s.runs.insert(i, r)
}

// qRanges returns the Q sub-ranges of r, in order.
func (s *Stream) qRanges(r Range) []Range {
	r.From = max(r.From, s.floor()+1)
	if r.Empty() {
		return nil
	}
	var out []Range
	next := r.From
	for i := s.search(r.From); i < s.runs.len() && s.runs.at(i).from <= r.To; i++ {
		ru := s.runs.at(i)
		if ru.from > next {
			out = append(out, Range{next, ru.from - 1})
		}
		next = ru.to + 1
	}
	if next <= r.To {
		out = append(out, Range{next, r.To})
	}
	return out
}

// Highest returns the highest tick whose state is known (S, D or L), or
// the floor of the stream if none above it is.
func (s *Stream) Highest() Tick {
	if s.runs.len() == 0 {
		return s.floor()
	}
	return s.runs.at(s.runs.len() - 1).to
}

// DoubtHorizon returns the highest tick h such that no tick in the stream
// up to h is Q.
func (s *Stream) DoubtHorizon() Tick {
	h := s.floor()
	for i := 0; i < s.runs.len() && s.runs.at(i).from == h+1; i++ {
		h = s.runs.at(i).to
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
	for i := s.search(r.From); i < s.runs.len() && s.runs.at(i).from <= r.To && next <= r.To; i++ {
		ru := s.runs.at(i)
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
	for i := range s.runs.len() {
		if r := s.runs.at(i); r.state == D {
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
func (s *Stream) runCount() int { return s.runs.len() }

// trimRuns forgets the oldest runs, raising Base, so that at most n remain.
func (s *Stream) trimRuns(n int) {
	if s.runs.len() > n {
		s.Advance(s.runs.at(s.runs.len() - n - 1).to)
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
