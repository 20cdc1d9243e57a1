package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sift-pubsub/sift/match"
)

// CloudEvents (https://cloudevents.io, version 1.0) map onto attributes:
// context and extension attributes keep their names; data that is a flat
// JSON object becomes its attributes prefixed "data."; any other data is
// an opaque payload in one of three attributes, delivered with the event
// and never filterable (the gateway refuses filters naming them).
const (
	// attrData holds a payload that is text: a JSON string's value, or a
	// binary-mode body of a non-JSON content type that is valid UTF-8.
	attrData = "data"
	// attrDataJSON holds a JSON payload that is not a flat object (an
	// array, a number, a nested object), as JSON text.
	attrDataJSON = "data_json"
	// attrDataBase64 holds a binary payload, base64-encoded (structured
	// mode's data_base64, or a binary-mode body that is not UTF-8).
	attrDataBase64 = "data_base64"
	dataPrefix     = "data."
)

// opaque reports whether name is one of the payload attributes.
func opaque(name string) bool {
	return name == attrData || name == attrDataJSON || name == attrDataBase64
}

// required are the CloudEvents context attributes every event must have.
var required = []string{"specversion", "id", "source", "type"}

const (
	ceJSON      = "application/cloudevents+json"
	ceBatchJSON = "application/cloudevents-batch+json"
)

// decodeStructured reads one CloudEvent in structured mode (a JSON
// object) into an event.
func decodeStructured(line int, raw []byte) (match.Event, error) {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&fields); err != nil || fields == nil {
		if err == nil {
			err = fmt.Errorf("a CloudEvent must be a JSON object")
		}
		return match.Event{}, badEvent(line, fmt.Errorf("invalid CloudEvent JSON: %w", err))
	}
	var attrs []match.Attr
	for _, name := range sortedKeys(fields) {
		v := fields[name]
		if string(v) == "null" {
			continue // a null attribute is an absent one
		}
		switch name {
		case "data":
			as, err := dataAttrs(v)
			if err != nil {
				return match.Event{}, badEvent(line, err)
			}
			attrs = append(attrs, as...)
			continue
		case "data_base64":
			var s string
			if json.Unmarshal(v, &s) != nil {
				return match.Event{}, &BadEventError{Line: line, Attribute: name, Msg: "data_base64 must be a string"}
			}
			if _, err := base64.StdEncoding.DecodeString(s); err != nil {
				return match.Event{}, &BadEventError{Line: line, Attribute: name, Msg: "data_base64 is not base64: " + err.Error()}
			}
			attrs = append(attrs, match.Attr{Name: attrDataBase64, Value: match.Str(s)})
			continue
		}
		if strings.HasPrefix(name, dataPrefix) || opaque(name) {
			return match.Event{}, &BadEventError{Line: line, Attribute: name, Msg: "attribute " + name + ": the name is reserved for the event's data"}
		}
		ev, err := match.ParseEventJSON(fmt.Appendf(nil, "{%q:%s}", name, v))
		if err != nil {
			return match.Event{}, badEvent(line, err)
		}
		attrs = append(attrs, ev.At(0))
	}
	ev, err := match.NewEvent(attrs...)
	if err != nil {
		return match.Event{}, badEvent(line, err)
	}
	return ev, checkRequired(line, ev)
}

// checkRequired checks the required context attributes: present,
// non-empty strings, specversion 1.0.
func checkRequired(line int, ev match.Event) error {
	for _, name := range required {
		v, ok := ev.Get(name)
		switch {
		case !ok:
			return &BadEventError{Line: line, Attribute: name, Msg: "attribute " + name + ": a CloudEvent requires it"}
		case v.Kind() != match.KindString || v.AsString() == "":
			return &BadEventError{Line: line, Attribute: name, Msg: "attribute " + name + ": must be a non-empty string"}
		}
	}
	if v, _ := ev.Get("specversion"); v.AsString() != "1.0" {
		return &BadEventError{Line: line, Attribute: "specversion", Msg: fmt.Sprintf("attribute specversion: %q is not supported (want 1.0)", v.AsString())}
	}
	return nil
}

// dataAttrs maps a CloudEvent's data: a flat object to "data."
// attributes, a string to the text payload, anything else to the JSON
// payload.
func dataAttrs(v json.RawMessage) ([]match.Attr, error) {
	trimmed := bytes.TrimSpace(v)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		if ev, err := match.ParseEventJSON(trimmed); err == nil {
			attrs := make([]match.Attr, ev.Len())
			for i := range attrs {
				a := ev.At(i)
				attrs[i] = match.Attr{Name: dataPrefix + a.Name, Value: a.Value}
			}
			return attrs, nil
		}
	}
	if len(trimmed) > 0 && trimmed[0] == '"' {
		var s string
		if err := json.Unmarshal(trimmed, &s); err != nil {
			return nil, &BadEventError{Attribute: "data", Msg: "attribute data: " + err.Error()}
		}
		return []match.Attr{{Name: attrData, Value: match.Str(s)}}, nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, trimmed); err != nil {
		return nil, &BadEventError{Attribute: "data", Msg: "attribute data: invalid JSON: " + err.Error()}
	}
	return []match.Attr{{Name: attrDataJSON, Value: match.Str(compact.String())}}, nil
}

// decodeBinary reads a CloudEvent in binary mode: context and extension
// attributes from the ce-* headers (string values, percent-decoded), the
// content type as datacontenttype, the body as data.
func decodeBinary(h http.Header, body []byte) (match.Event, error) {
	var attrs []match.Attr
	for key, vals := range h {
		if len(key) <= 3 || !strings.EqualFold(key[:3], "ce-") {
			continue
		}
		name := strings.ToLower(key[3:])
		if len(vals) != 1 {
			return match.Event{}, &BadEventError{Attribute: name, Msg: fmt.Sprintf("header %s given %d times", key, len(vals))}
		}
		if !match.ValidAttrName(name) || strings.HasPrefix(name, dataPrefix) || opaque(name) || name == "datacontenttype" {
			return match.Event{}, &BadEventError{Attribute: name, Msg: fmt.Sprintf("header %s: %q cannot be an attribute name here", key, name)}
		}
		val, err := url.PathUnescape(vals[0])
		if err != nil || !utf8.ValidString(val) {
			return match.Event{}, &BadEventError{Attribute: name, Msg: fmt.Sprintf("header %s: not a valid percent-encoded UTF-8 value", key)}
		}
		attrs = append(attrs, match.Attr{Name: name, Value: match.Str(val)})
	}
	ct := h.Get("Content-Type")
	if ct != "" {
		attrs = append(attrs, match.Attr{Name: "datacontenttype", Value: match.Str(ct)})
	}
	if len(body) > 0 {
		attrs = append(attrs, bodyAttrs(ct, body)...)
	}
	ev, err := match.NewEvent(attrs...)
	if err != nil {
		return match.Event{}, badEvent(0, err)
	}
	return ev, checkRequired(0, ev)
}

// bodyAttrs maps a binary-mode body: JSON (by content type) as data in
// structured mode, else text, else base64.
func bodyAttrs(contentType string, body []byte) []match.Attr {
	if isJSONType(contentType) && json.Valid(body) {
		if as, err := dataAttrs(body); err == nil {
			return as
		}
	}
	if utf8.Valid(body) {
		return []match.Attr{{Name: attrData, Value: match.Str(string(body))}}
	}
	return []match.Attr{{Name: attrDataBase64, Value: match.Str(base64.StdEncoding.EncodeToString(body))}}
}

// isJSONType reports whether a media type is JSON (application/json or
// any +json type).
func isJSONType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// appendCloudEvent appends ev as a structured CloudEvent: attributes as
// context and extension attributes, "data." attributes as the data
// object, the payload attributes as data or data_base64. Missing
// required attributes are filled in: specversion 1.0, id (the given one),
// source /sift/ROUTER, type sift.event.
func appendCloudEvent(b []byte, ev match.Event, id, source string) []byte {
	var top, data []match.Attr
	var payload *match.Attr
	for i := range ev.Len() {
		a := ev.At(i)
		switch {
		case strings.HasPrefix(a.Name, dataPrefix):
			data = append(data, match.Attr{Name: a.Name[len(dataPrefix):], Value: a.Value})
		case opaque(a.Name):
			payload = &a
		default:
			top = append(top, a)
		}
	}
	fill := func(name, val string) {
		if _, ok := ev.Get(name); !ok {
			top = append(top, match.Attr{Name: name, Value: match.Str(val)})
		}
	}
	fill("specversion", "1.0")
	fill("id", id)
	fill("source", source)
	fill("type", "sift.event")
	if len(data) > 0 {
		fill("datacontenttype", "application/json")
	}
	slices.SortFunc(top, func(x, y match.Attr) int { return strings.Compare(x.Name, y.Name) })
	return appendCEObject(b, top, data, payload)
}

// appendCEObject writes the CloudEvent object.
func appendCEObject(b []byte, top, data []match.Attr, payload *match.Attr) []byte {
	obj := match.NewTrustedEvent(top).AppendJSON(nil)
	b = append(b, obj[:len(obj)-1]...)
	sep := func() {
		if len(top) > 0 {
			b = append(b, ',')
		}
	}
	switch {
	case len(data) > 0:
		sep()
		b = append(b, `"data":`...)
		b = match.NewTrustedEvent(data).AppendJSON(b)
	case payload != nil && payload.Name == attrDataJSON && json.Valid([]byte(payload.Value.AsString())):
		sep()
		b = append(append(b, `"data":`...), payload.Value.AsString()...)
	case payload != nil && payload.Name == attrDataBase64:
		sep()
		b = append(b, `"data_base64":`...)
		b = payload.Value.AppendJSON(b)
	case payload != nil:
		sep()
		b = append(b, `"data":`...)
		b = payload.Value.AppendJSON(b)
	}
	return append(b, '}')
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// decodeBatch reads a CloudEvents batch: a JSON array of structured
// events, each reported by the line it starts on.
func decodeBatch(body []byte) ([]match.Event, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(body, &elems); err != nil {
		return nil, &BadEventError{Line: 1, Msg: "a CloudEvents batch must be a JSON array: " + err.Error()}
	}
	if len(elems) == 0 {
		return nil, &BadEventError{Msg: "the batch holds no event"}
	}
	events := make([]match.Event, 0, len(elems))
	off := 0
	for _, raw := range elems {
		// Elements are subslices of body in order: find each one's line.
		i := bytes.Index(body[off:], raw)
		line := 1
		if i >= 0 {
			line += bytes.Count(body[:off+i], []byte{'\n'})
			off += i + len(raw)
		}
		ev, err := decodeStructured(line, raw)
		if err != nil {
			return nil, err
		}
		events = append(events, ev)
	}
	return events, nil
}
