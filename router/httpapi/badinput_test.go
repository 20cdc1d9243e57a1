package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestBadPublish: every malformed publish request is refused with a clear
// error naming the line and attribute where there is one, and publishes
// nothing (a subscriber to every event sees only the sentinel after them).
func TestBadPublish(t *testing.T) {
	tg := startGateway(t, nil, func(c *Config) { c.MaxBody = 4096 })
	s := tg.mustSubscribe("filter=*", nil)
	ceHdr := func(kv ...string) map[string]string {
		h := map[string]string{"ce-specversion": "1.0", "ce-id": "1", "ce-source": "/t", "ce-type": "t"}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(h, kv[i])
			} else {
				h[kv[i]] = kv[i+1]
			}
		}
		return h
	}
	cases := []struct {
		name, query, ctype, body string
		hdr                      map[string]string
		code                     int
		line                     float64
		attr, msg                string
	}{
		{name: "invalid JSON", body: "{\"a\":1}\n{\"a\":", code: 400, line: 2, msg: "invalid JSON"},
		{name: "not an object", body: `[1,2]`, code: 400, line: 1, msg: "must be a JSON object"},
		{name: "nested object", body: "{\"a\":1}\n\n{\"b\":{\"c\":1}}", code: 400, line: 3, attr: "b", msg: "nested objects"},
		{name: "array value", body: `{"tags":["x"]}`, code: 400, line: 1, attr: "tags", msg: "arrays"},
		{name: "null", body: `{"x":null}`, code: 400, line: 1, attr: "x", msg: "null"},
		{name: "bad name", body: `{"1x":1}`, code: 400, line: 1, attr: "1x", msg: "invalid attribute name"},
		{name: "duplicate", body: `{"a":1,"a":2}`, code: 400, line: 1, attr: "a", msg: "given twice"},
		{name: "int overflow", body: `{"n":99999999999999999999}`, code: 400, line: 1, attr: "n", msg: "int64"},
		{name: "float overflow", body: `{"f":1e999}`, code: 400, line: 1, attr: "f", msg: "finite"},
		{name: "trailing data", ctype: "application/x-ndjson", body: `{"a":1} {"b":2}`, code: 400, line: 1, msg: "after the event"},
		{name: "empty body", body: "\n\n", code: 400, msg: "no event"},
		{name: "json stream bad second", ctype: "application/json", body: "{\"a\":1}\n\n{\"a\":true,\"b\":null}", code: 400, line: 3, attr: "b", msg: "null"},
		{name: "too large", body: `{"a":"` + strings.Repeat("x", 5000) + `"}`, code: 413, msg: "exceeds 4096 bytes"},
		{name: "bad durable flag", query: "?durable=yes", body: `{"a":1}`, code: 400, msg: "durable"},
		{name: "ce structured missing id", ctype: ceJSON, body: `{"specversion":"1.0","source":"/s","type":"t"}`, code: 400, line: 1, attr: "id", msg: "requires"},
		{name: "ce structured old version", ctype: ceJSON, body: `{"specversion":"0.3","id":"1","source":"/s","type":"t"}`, code: 400, line: 1, attr: "specversion", msg: "0.3"},
		{name: "ce structured id not string", ctype: ceJSON, body: `{"specversion":"1.0","id":7,"source":"/s","type":"t"}`, code: 400, line: 1, attr: "id", msg: "string"},
		{name: "ce structured nested extension", ctype: ceJSON, body: `{"specversion":"1.0","id":"1","source":"/s","type":"t","ext":{"a":1}}`, code: 400, line: 1, attr: "ext", msg: "nested"},
		{name: "ce structured reserved name", ctype: ceJSON, body: `{"specversion":"1.0","id":"1","source":"/s","type":"t","data.x":1}`, code: 400, line: 1, attr: "data.x", msg: "reserved"},
		{name: "ce structured bad base64", ctype: ceJSON, body: `{"specversion":"1.0","id":"1","source":"/s","type":"t","data_base64":"%%"}`, code: 400, line: 1, attr: "data_base64", msg: "base64"},
		{name: "ce structured not JSON", ctype: ceJSON, body: `{"specversion":`, code: 400, line: 1, msg: "invalid CloudEvent"},
		{name: "ce batch second bad", ctype: ceBatchJSON, body: "[\n{\"specversion\":\"1.0\",\"id\":\"1\",\"source\":\"/s\",\"type\":\"t\"},\n{\"specversion\":\"1.0\",\"id\":\"2\",\"type\":\"t\"}\n]", code: 400, line: 3, attr: "source", msg: "requires"},
		{name: "ce batch not array", ctype: ceBatchJSON, body: `{}`, code: 400, msg: "JSON array"},
		{name: "ce binary missing source", body: `{"a":1}`, ctype: "application/json", hdr: ceHdr("ce-source", ""), code: 400, attr: "source", msg: "requires"},
		{name: "ce binary bad header name", body: "x", ctype: "text/plain", hdr: ceHdr("ce-1bad", "v"), code: 400, attr: "1bad", msg: "cannot be an attribute name"},
		{name: "ce binary bad escape", body: "x", ctype: "text/plain", hdr: ceHdr("ce-ext", "%zz"), code: 400, attr: "ext", msg: "percent-encoded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctype := c.ctype
			if ctype == "" {
				ctype = "application/x-ndjson"
			}
			code, out := tg.post(c.query, ctype, c.body, c.hdr)
			msg, _ := out["error"].(string)
			if code != c.code || !strings.Contains(msg, c.msg) {
				t.Fatalf("%d %v, want %d with %q", code, out, c.code, c.msg)
			}
			if c.line != 0 && out["line"] != c.line {
				t.Fatalf("line %v, want %v (%v)", out["line"], c.line, out)
			}
			if c.attr != "" && out["attribute"] != c.attr {
				t.Fatalf("attribute %v, want %v (%v)", out["attribute"], c.attr, out)
			}
		})
	}
	res, err := http.Get(tg.srv.URL + "/v1/publish")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET /v1/publish: %d", res.StatusCode)
	}
	tg.mustPublish("", `{"sentinel":1}`, 1)
	if m := s.next(false); m.data != `{"sentinel":1}` {
		t.Fatalf("first delivery %+v, want the sentinel: a bad request published something", m)
	}
}

// TestBadSubscribe: bad subscribe requests are refused before anything is
// installed, with the filter's column where the filter is at fault.
func TestBadSubscribe(t *testing.T) {
	tg := startGateway(t, nil, nil)
	cases := []struct {
		name, query string
		hdr         map[string]string
		code        int
		msg         string
		column      float64
	}{
		{name: "no filter", query: "", code: 400, msg: "?filter= is required"},
		{name: "syntax", query: "filter=" + url.QueryEscape(`price < 10 && symbol = "x"`), code: 400, msg: "col 22", column: 22},
		{name: "empty filter", query: "filter=", code: 400, msg: "col 1", column: 1},
		{name: "NaN", query: "filter=" + url.QueryEscape(`x < NaN`), code: 400, msg: "col 5", column: 5},
		{name: "opaque payload", query: "filter=" + url.QueryEscape(`data == "x"`), code: 400, msg: "opaque payload"},
		{name: "bad format", query: "filter=*&format=xml", code: 400, msg: "format"},
		{name: "durable without id", query: "filter=*&durable=", code: 400, msg: "id"},
		{name: "bad Last-Event-ID", query: "filter=*&durable=d", hdr: map[string]string{"Last-Event-ID": "r1=abc"}, code: 400, msg: "not a checkpoint token"},
		{name: "negative tick", query: "filter=*&durable=d", hdr: map[string]string{"Last-Event-ID": "r1=-5"}, code: 400, msg: "non-negative"},
		{name: "repeated pubend", query: "filter=*&durable=d", hdr: map[string]string{"Last-Event-ID": "r1=5&r1=6"}, code: 400, msg: "2 times"},
		{name: "empty token", query: "filter=*&durable=d&last_event_id=" + url.QueryEscape("&"), code: 400, msg: "no pubend"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, code, body := tg.subscribe(c.query, c.hdr)
			if s != nil {
				t.Fatal("subscribed")
			}
			if code != c.code || !strings.Contains(body, c.msg) {
				t.Fatalf("%d %s, want %d with %q", code, body, c.code, c.msg)
			}
			if c.column != 0 && !strings.Contains(body, `"column":`+strconv.Itoa(int(c.column))) {
				t.Fatalf("%s: no column %v", body, c.column)
			}
		})
	}
	st, err := tg.gw.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.Subscriptions != 0 {
		t.Fatalf("%d subscriptions installed by refused requests", st.Subscriptions)
	}
	if res, err := http.Get(tg.srv.URL + "/v1/nothing"); err != nil || res.StatusCode != 404 {
		t.Fatalf("/v1/nothing: %v %v", res.StatusCode, err)
	}
}
