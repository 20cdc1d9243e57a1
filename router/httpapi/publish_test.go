package httpapi

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestPublishSubscribe: JSON Lines and application/json bodies are
// accepted and delivered, each matching event once as the JSON object
// sift sub prints, in publish order; events the filter rejects are not.
func TestPublishSubscribe(t *testing.T) {
	tg := startGateway(t, nil, nil)
	s := tg.mustSubscribe("filter="+url.QueryEscape(`price < 10 && symbol == "IBM"`), nil)
	all := tg.mustSubscribe("filter=*", nil)
	tg.mustPublish("", jsonLines(
		`{"symbol":"IBM","price":9.5,"volume":100}`,
		`{"symbol":"IBM","price":11}`,
		``,
		`{"symbol":"HP","price":1}`,
		`{"urgent":true,"price":3,"symbol":"IBM"}`,
	), 4)
	code, out := tg.post("", "application/json", "{\n  \"symbol\": \"IBM\",\n  \"price\": 0.5\n}\n{\"symbol\":\"IBM\",\"price\":2}", nil)
	if code != 200 || out["accepted"] != float64(2) {
		t.Fatalf("application/json: %d %v", code, out)
	}
	want := []string{
		`{"price":9.5,"symbol":"IBM","volume":100}`,
		`{"price":3,"symbol":"IBM","urgent":true}`,
		`{"price":0.5,"symbol":"IBM"}`,
		`{"price":2,"symbol":"IBM"}`,
	}
	for _, w := range want {
		if m := s.next(false); m.data != w || m.event != "" {
			t.Fatalf("got %+v, want data %s", m, w)
		}
	}
	s.none(200 * time.Millisecond)
	for range 6 {
		all.next(false)
	}
}

// TestPublishBadEventPublishesNothing: a request with one bad line is a
// 400 naming the line and the attribute, and none of its good lines
// reach a subscriber.
func TestPublishBadEventPublishesNothing(t *testing.T) {
	tg := startGateway(t, nil, nil)
	s := tg.mustSubscribe("filter=*", nil)
	code, out := tg.post("", "application/x-ndjson", jsonLines(`{"a":1}`, `{"a":2}`, `{"a":3,"price":null}`, `{"a":4}`), nil)
	if code != 400 || out["line"] != float64(3) || out["attribute"] != "price" {
		t.Fatalf("bad line 3: %d %v", code, out)
	}
	if msg := out["error"].(string); !strings.Contains(msg, "line 3") || !strings.Contains(msg, "price") || !strings.Contains(msg, "null") {
		t.Fatalf("error %q does not name line 3, price and null", msg)
	}
	tg.mustPublish("", `{"sentinel":true}`, 1)
	if m := s.next(false); m.data != `{"sentinel":true}` {
		t.Fatalf("first delivery %+v, want the sentinel: the bad request published something", m)
	}
}
