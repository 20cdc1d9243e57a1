package sublog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
)

// Kind says what a line records.
type Kind uint8

// The kinds of line.
const (
	KindEvent Kind = iota + 1 // {"pubend":P,"tick":T,"event":{...}}
	KindGap                   // {"pubend":P,"gap":[FROM,TO]}
	KindCT                    // {"ct":{"P":T,...}}
)

// Entry is one line of a log.
type Entry struct {
	Kind   Kind
	Pubend string        // KindEvent, KindGap
	Tick   durable.Tick  // KindEvent
	Event  match.Event   // KindEvent
	Gap    durable.Range // KindGap: inclusive
	CT     durable.CT    // KindCT
}

// Equal reports whether e and f record the same thing.
func (e Entry) Equal(f Entry) bool {
	if e.Kind != f.Kind || e.Pubend != f.Pubend || e.Tick != f.Tick || e.Gap != f.Gap || len(e.CT) != len(f.CT) {
		return false
	}
	for p, t := range e.CT {
		if u, ok := f.CT[p]; !ok || u != t {
			return false
		}
	}
	return e.Event.Equal(f.Event)
}

// String renders e as its line, without the newline.
func (e Entry) String() string { return string(bytes.TrimSuffix(AppendLine(nil, e), []byte{'\n'})) }

// AppendLine appends e as one JSON line, newline included, to b.
func AppendLine(b []byte, e Entry) []byte {
	switch e.Kind {
	case KindEvent:
		b = appendString(append(b, `{"pubend":`...), e.Pubend)
		b = strconv.AppendInt(append(b, `,"tick":`...), int64(e.Tick), 10)
		b = e.Event.AppendJSON(append(b, `,"event":`...))
		return append(b, "}\n"...)
	case KindGap:
		b = appendString(append(b, `{"pubend":`...), e.Pubend)
		b = strconv.AppendInt(append(b, `,"gap":[`...), int64(e.Gap.From), 10)
		b = strconv.AppendInt(append(b, ','), int64(e.Gap.To), 10)
		return append(b, "]}\n"...)
	case KindCT:
		b = append(b, `{"ct":{`...)
		for i, p := range e.CT.Pubends() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, p)
			b = strconv.AppendInt(append(b, ':'), int64(e.CT[p]), 10)
		}
		return append(b, "}}\n"...)
	}
	panic(fmt.Sprintf("sublog: entry of unknown kind %d", e.Kind))
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil {
		panic(err) // a Go string always marshals
	}
	return append(b, q...)
}

// rawLine is the union of the three line shapes.
type rawLine struct {
	Pubend *string                 `json:"pubend"`
	Tick   *int64                  `json:"tick"`
	Event  json.RawMessage         `json:"event"`
	Gap    *[]int64                `json:"gap"`
	CT     map[string]durable.Tick `json:"ct"`
}

// ParseLine decodes one line (without its newline). It checks the shape
// and the values: a tick is at least 1, a gap is a non-empty range, a ct
// value is not negative, a pubend name is not empty.
func ParseLine(line []byte) (Entry, error) {
	var r rawLine
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Entry{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return Entry{}, errors.New("data after the line's object")
	}
	switch {
	case r.CT != nil:
		return parseCT(r)
	case r.Gap != nil:
		return parseGap(r)
	case r.Event != nil:
		return parseEvent(r)
	}
	return Entry{}, errors.New(`a line needs "event", "gap" or "ct"`)
}

func parseEvent(r rawLine) (Entry, error) {
	if r.Pubend == nil || r.Tick == nil {
		return Entry{}, errors.New(`an event line needs "pubend" and "tick"`)
	}
	if *r.Pubend == "" || *r.Tick < 1 {
		return Entry{}, fmt.Errorf("event line: pubend %q tick %d: want a name and a tick >= 1", *r.Pubend, *r.Tick)
	}
	e, err := match.ParseEventJSON(r.Event)
	if err != nil {
		return Entry{}, fmt.Errorf("event line: %w", err)
	}
	return Entry{Kind: KindEvent, Pubend: *r.Pubend, Tick: durable.Tick(*r.Tick), Event: e}, nil
}

func parseGap(r rawLine) (Entry, error) {
	if r.Pubend == nil || r.Tick != nil || r.Event != nil || r.CT != nil {
		return Entry{}, errors.New(`a gap line has exactly "pubend" and "gap"`)
	}
	g := *r.Gap
	if *r.Pubend == "" || len(g) != 2 || g[0] < 1 || g[0] > g[1] {
		return Entry{}, fmt.Errorf("gap line: pubend %q gap %v: want a name and [FROM,TO] with 1 <= FROM <= TO", *r.Pubend, g)
	}
	return Entry{Kind: KindGap, Pubend: *r.Pubend, Gap: durable.Range{From: durable.Tick(g[0]), To: durable.Tick(g[1])}}, nil
}

func parseCT(r rawLine) (Entry, error) {
	if r.Pubend != nil || r.Tick != nil || r.Event != nil || r.Gap != nil {
		return Entry{}, errors.New(`a ct line has only "ct"`)
	}
	ct := durable.CT(r.CT)
	for _, p := range ct.Pubends() {
		if p == "" || ct[p] < 0 {
			return Entry{}, fmt.Errorf("ct line: pubend %q tick %d: want a name and a tick >= 0", p, ct[p])
		}
	}
	return Entry{Kind: KindCT, CT: ct}, nil
}

// apply advances ct by e, which must lie above it: an event's tick and a
// gap's FROM above ct's tick of their pubend, a ct line's values at or
// above. It changes nothing on error.
func apply(ct durable.CT, e Entry) error {
	switch e.Kind {
	case KindEvent:
		if e.Tick <= ct[e.Pubend] {
			return fmt.Errorf("event at tick %d of %s is not above the checkpoint %d", e.Tick, e.Pubend, ct[e.Pubend])
		}
		ct[e.Pubend] = e.Tick
	case KindGap:
		if e.Gap.From <= ct[e.Pubend] {
			return fmt.Errorf("gap %v of %s does not start above the checkpoint %d", e.Gap, e.Pubend, ct[e.Pubend])
		}
		ct[e.Pubend] = e.Gap.To
	case KindCT:
		ps := e.CT.Pubends()
		if i := slices.IndexFunc(ps, func(p string) bool { return e.CT[p] < ct[p] }); i >= 0 {
			return fmt.Errorf("ct of %s goes back from %d to %d", ps[i], ct[ps[i]], e.CT[ps[i]])
		}
		for p, t := range e.CT {
			ct[p] = t
		}
	}
	return nil
}
