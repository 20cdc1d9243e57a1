package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/sift-pubsub/sift/match"
)

// BadEventError is a request event that cannot be published: its line in
// the body (1-based; 0 for a CloudEvent in binary mode, whose attributes
// come from headers), the attribute at fault when one is, and why.
type BadEventError struct {
	Line      int
	Attribute string
	Msg       string
}

func (e *BadEventError) Error() string {
	s := ""
	if e.Line > 0 {
		s = fmt.Sprintf("line %d: ", e.Line)
	}
	if e.Attribute != "" && !bytes.Contains([]byte(e.Msg), []byte(e.Attribute)) {
		s += "attribute " + e.Attribute + ": "
	}
	return s + e.Msg
}

// attrInMsg finds the attribute an error of match.ParseEventJSON or
// match.NewEvent names ("attribute NAME: ..." or "invalid attribute name
// "NAME": ...").
var attrInMsg = regexp.MustCompile(`^(?:attribute ([A-Za-z_][A-Za-z0-9_.-]*):|invalid attribute name ("(?:[^"\\]|\\.)*"))`)

// badEvent wraps an event decoding error with its line, extracting the
// attribute it names.
func badEvent(line int, err error) *BadEventError {
	msg := err.Error()
	e := &BadEventError{Line: line, Msg: msg}
	if m := attrInMsg.FindStringSubmatch(msg); m != nil {
		e.Attribute = m[1]
		if m[2] != "" {
			var name string
			if json.Unmarshal([]byte(m[2]), &name) == nil {
				e.Attribute = name
			}
		}
	}
	return e
}

// decodeLines reads JSON Lines: one flat JSON object per line; blank
// lines are skipped. Every line is decoded before any event is returned,
// so a bad line fails the whole body.
func decodeLines(body []byte) ([]match.Event, error) {
	var events []match.Event
	for line := 1; len(body) > 0; line++ {
		text := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			text, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		text = bytes.TrimSpace(text)
		if len(text) == 0 {
			continue
		}
		ev, err := match.ParseEventJSON(text)
		if err != nil {
			return nil, badEvent(line, err)
		}
		events = append(events, ev)
	}
	if len(events) == 0 {
		return nil, &BadEventError{Msg: "the body holds no event"}
	}
	return events, nil
}

// decodeJSONStream reads application/json bodies: one or more JSON
// objects separated by white space (a single event, possibly spread over
// several lines, or a sequence of them). A bad object fails the whole body
// with the line it starts on.
func decodeJSONStream(body []byte) ([]match.Event, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var events []match.Event
	for {
		start := skipSpace(body, int(dec.InputOffset()))
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		line := 1 + bytes.Count(body[:start], []byte{'\n'})
		if err != nil {
			return nil, badEvent(line, fmt.Errorf("invalid JSON: %w", err))
		}
		ev, err := match.ParseEventJSON(raw)
		if err != nil {
			return nil, badEvent(line, err)
		}
		events = append(events, ev)
	}
	if len(events) == 0 {
		return nil, &BadEventError{Msg: "the body holds no event"}
	}
	return events, nil
}

// skipSpace returns the offset of the first non-space byte of b at or
// after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}
