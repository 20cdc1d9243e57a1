package match

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// LineError locates a problem in a subscriptions or events file: Line is
// the physical 1-based line, Col the 1-based column (0 when the problem is
// the whole line, as for events).
type LineError struct {
	Line int
	Col  int
	Err  error
}

// Error returns "LINE:COL: message" or "LINE: message".
func (e *LineError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("%d:%d: %v", e.Line, e.Col, e.Err)
	}
	return fmt.Sprintf("%d: %v", e.Line, e.Err)
}

// Unwrap returns the underlying error.
func (e *LineError) Unwrap() error { return e.Err }

// maxLine bounds one line of a subscriptions or events file.
const maxLine = 16 << 20

// ReadSubscriptions reads a subscriptions file: one filter per line; blank
// lines and lines starting with # are skipped; a subscription's id is its
// 0-based index among the remaining lines. A malformed filter is a
// *LineError with the line and column.
func ReadSubscriptions(r io.Reader) ([]Filter, error) {
	sr := NewSubscriptionReader(r)
	var filters []Filter
	for {
		f, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return filters, nil
		}
		if err != nil {
			return nil, err
		}
		filters = append(filters, f)
	}
}

// SubscriptionReader reads a subscriptions file one filter at a time, so
// that a bulk load need not hold every filter. The filters it returns share
// nothing with the text read: attribute names are interned (one string per
// name, not one copy of the line per constraint) and constraint slices have
// no spare capacity, so a slice of them costs its constraints' size alone.
type SubscriptionReader struct {
	sc    *bufio.Scanner
	line  int
	n     int
	bytes int64
	names map[string]string
}

// NewSubscriptionReader returns a reader of the subscriptions file r.
func NewSubscriptionReader(r io.Reader) *SubscriptionReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	return &SubscriptionReader{sc: sc, names: make(map[string]string)}
}

// Next returns the next filter, or io.EOF after the last one. Its id is
// the number of filters returned before it. A malformed filter is a
// *LineError with the line and column.
func (r *SubscriptionReader) Next() (Filter, error) {
	for r.sc.Scan() {
		r.line++
		text := r.sc.Text()
		r.bytes += int64(len(text)) + 1
		trimmed := strings.TrimSpace(text)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		f, err := Parse(text)
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				return Filter{}, &LineError{Line: r.line, Col: pe.Col, Err: errors.New(pe.Msg)}
			}
			return Filter{}, &LineError{Line: r.line, Err: err}
		}
		r.n++
		return r.detach(f), nil
	}
	if err := r.sc.Err(); err != nil {
		return Filter{}, fmt.Errorf("read subscriptions: %w", err)
	}
	return Filter{}, io.EOF
}

// Count returns the number of filters returned so far.
func (r *SubscriptionReader) Count() int { return r.n }

// Bytes returns the number of bytes of the file consumed so far (lines
// and their newlines).
func (r *SubscriptionReader) Bytes() int64 { return r.bytes }

// detach returns f with interned attribute names, string values of their
// own and an exactly sized constraint slice.
func (r *SubscriptionReader) detach(f Filter) Filter {
	if len(f.cs) == 0 {
		return f
	}
	cs := make([]Constraint, len(f.cs))
	for i, c := range f.cs {
		name, ok := r.names[c.Attr]
		if !ok {
			name = strings.Clone(c.Attr)
			r.names[name] = name
		}
		c.Attr = name
		c.Val.str = strings.Clone(c.Val.str)
		cs[i] = c
	}
	return Filter{cs: cs}
}

// EventReader reads an events file (JSON Lines, one event per line; blank
// lines are skipped) one event at a time.
type EventReader struct {
	sc   *bufio.Scanner
	line int
}

// NewEventReader returns a reader of the events file r.
func NewEventReader(r io.Reader) *EventReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	return &EventReader{sc: sc}
}

// Next returns the next event, or io.EOF after the last one. A malformed
// event is a *LineError naming the physical line.
func (r *EventReader) Next() (Event, error) {
	for r.sc.Scan() {
		r.line++
		b := r.sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		e, err := ParseEventJSON(b)
		if err != nil {
			return Event{}, &LineError{Line: r.line, Err: err}
		}
		return e, nil
	}
	if err := r.sc.Err(); err != nil {
		return Event{}, fmt.Errorf("read events: %w", err)
	}
	return Event{}, io.EOF
}

// ReadEvents reads a whole events file.
func ReadEvents(r io.Reader) ([]Event, error) {
	er := NewEventReader(r)
	var events []Event
	for {
		e, err := er.Next()
		if errors.Is(err, io.EOF) {
			return events, nil
		}
		if err != nil {
			return nil, err
		}
		events = append(events, e)
	}
}

// WriteSubscriptions writes filters in the subscriptions file format, one
// canonical filter per line.
func WriteSubscriptions(w io.Writer, filters []Filter) error {
	bw := bufio.NewWriter(w)
	for _, f := range filters {
		bw.WriteString(f.String())
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write subscriptions: %w", err)
	}
	return nil
}

// WriteEvents writes events as JSON Lines.
func WriteEvents(w io.Writer, events []Event) error {
	bw := bufio.NewWriter(w)
	var buf []byte
	for _, e := range events {
		buf = e.AppendJSON(buf[:0])
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write events: %w", err)
	}
	return nil
}
