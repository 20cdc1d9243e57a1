package match

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseEventJSON decodes one event from a flat JSON object such as
// {"symbol":"IBM","price":9.5,"volume":100,"urgent":true}. A number without
// fraction or exponent is an int64 (an error if it overflows), any other
// number a float64. Nested objects, arrays, null, duplicate and invalid
// attribute names are rejected with an error that names the attribute.
func ParseEventJSON(data []byte) (Event, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return Event{}, err
	}
	var attrs []Attr
	seen := make(map[string]bool)
	for dec.More() {
		a, err := decodeAttr(dec, data)
		if err != nil {
			return Event{}, err
		}
		if seen[a.Name] {
			return Event{}, fmt.Errorf("attribute %s: given twice", a.Name)
		}
		seen[a.Name] = true
		attrs = append(attrs, a)
	}
	if err := expectDelim(dec, '}'); err != nil {
		return Event{}, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Event{}, errors.New("unexpected data after the event object")
	}
	return NewEvent(attrs...)
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("invalid JSON: %w", jsonErr(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		if want == '{' {
			return fmt.Errorf("an event must be a JSON object, found %s", describeToken(tok))
		}
		return fmt.Errorf("expected %q, found %s", string(want), describeToken(tok))
	}
	return nil
}

// decodeAttr reads one name and value. encoding/json replaces invalid
// UTF-8 with U+FFFD silently, so the raw bytes of both are checked first
// (data is the whole input; the decoder's offsets index it).
func decodeAttr(dec *json.Decoder, data []byte) (Attr, error) {
	start := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return Attr{}, fmt.Errorf("invalid JSON: %w", jsonErr(err))
	}
	if !utf8.Valid(data[start:dec.InputOffset()]) {
		return Attr{}, fmt.Errorf("an attribute name after byte %d is not valid UTF-8", start)
	}
	name, _ := tok.(string)
	if err := checkAttrName(name); err != nil {
		return Attr{}, err
	}
	start = dec.InputOffset()
	tok, err = dec.Token()
	if err != nil {
		return Attr{}, fmt.Errorf("attribute %s: invalid JSON: %w", name, jsonErr(err))
	}
	if !utf8.Valid(data[start:dec.InputOffset()]) {
		return Attr{}, fmt.Errorf("attribute %s: string is not valid UTF-8", name)
	}
	v, err := jsonValue(tok)
	if err != nil {
		return Attr{}, fmt.Errorf("attribute %s: %w", name, err)
	}
	return Attr{Name: name, Value: v}, nil
}

func jsonValue(tok json.Token) (Value, error) {
	switch t := tok.(type) {
	case string:
		return Str(t), nil
	case bool:
		return Bool(t), nil
	case json.Number:
		return parseNumber(string(t))
	case json.Delim:
		if t == '{' {
			return Value{}, errors.New("nested objects are not allowed")
		}
		return Value{}, errors.New("arrays are not allowed")
	case nil:
		return Value{}, errors.New("null is not allowed")
	}
	return Value{}, fmt.Errorf("unexpected %v", tok)
}

// parseNumber reads a decimal number: an int64 without fraction or
// exponent, otherwise a finite float64.
func parseNumber(s string) (Value, error) {
	if !strings.ContainsAny(s, ".eE") {
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Value{}, fmt.Errorf("integer %s is out of the int64 range", s)
		}
		return Int(i), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Value{}, fmt.Errorf("number %s is not a finite float64", s)
	}
	if f == 0 && nonzeroMantissa(s) {
		return Value{}, fmt.Errorf("number %s underflows float64 (it would read as 0)", s)
	}
	return Float(f)
}

// nonzeroMantissa reports whether a decimal number's digits before its
// exponent include one that is not 0.
func nonzeroMantissa(s string) bool {
	for _, c := range s {
		switch {
		case c == 'e' || c == 'E':
			return false
		case c >= '1' && c <= '9':
			return true
		}
	}
	return false
}

func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", string(t))
	case string:
		return "a string"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

func jsonErr(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// AppendJSON appends the event as a JSON object, attributes in name order.
// Floats keep a fraction or exponent, so ParseEventJSON reads them back as
// floats.
func (e Event) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, a := range e.attrs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, a.Name)
		b = append(b, ':')
		b = a.Value.AppendJSON(b)
	}
	return append(b, '}')
}

// AppendJSON appends v as a JSON value.
func (v Value) AppendJSON(b []byte) []byte {
	if v.kind == KindString {
		return appendJSONString(b, v.str)
	}
	return append(b, v.String()...)
}

// MarshalJSON implements json.Marshaler.
func (e Event) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil), nil }

// UnmarshalJSON implements json.Unmarshaler with ParseEventJSON.
func (e *Event) UnmarshalJSON(data []byte) error {
	ev, err := ParseEventJSON(data)
	if err != nil {
		return err
	}
	*e = ev
	return nil
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // cannot fail for a string
	return append(b, q...)
}
