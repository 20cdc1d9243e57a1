package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// FuzzDecodeBody: whatever a publish body and its content type, decoding
// either fails with an error or yields valid events that survive a JSON
// round trip and encode to valid JSON as CloudEvents; it never panics.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range []struct {
		ctype, body string
	}{
		{"application/x-ndjson", "{\"a\":1}\n{\"b\":\"x\"}\n"},
		{"application/json", "{\"a\":1.5}\n {\"c\":true}"},
		{ceJSON, `{"specversion":"1.0","id":"1","source":"/s","type":"t","data":{"k":[1]}}`},
		{ceBatchJSON, `[{"specversion":"1.0","id":"1","source":"/s","type":"t","data":"x"}]`},
		{"binary", `{"a":{"b":1}}`},
	} {
		f.Add(seed.ctype, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, ctype string, body []byte) {
		h := http.Header{}
		if ctype == "binary" {
			h.Set("Ce-Specversion", "1.0")
			h.Set("Ce-Id", "1")
			h.Set("Ce-Source", "/s")
			h.Set("Ce-Type", "t")
			h.Set("Content-Type", "application/json")
		} else {
			h.Set("Content-Type", ctype)
		}
		events, err := decodeBody(h, body)
		if err != nil {
			if len(events) != 0 {
				t.Fatal("events with an error")
			}
			return
		}
		for _, ev := range events {
			back, err := match.ParseEventJSON(ev.AppendJSON(nil))
			if err != nil || !back.Equal(ev) {
				t.Fatalf("%s does not round-trip: %v", ev, err)
			}
			if ce := appendCloudEvent(nil, ev, "id", "/s"); !json.Valid(ce) {
				t.Fatalf("CloudEvent of %s is not JSON: %s", ev, ce)
			}
		}
	})
}

// FuzzDecodeCT: a Last-Event-ID either fails or round-trips.
func FuzzDecodeCT(f *testing.F) {
	f.Add("r1=5")
	f.Add("a%26b=1&c=2")
	f.Fuzz(func(t *testing.T, s string) {
		ct, err := decodeCT(s)
		if err != nil {
			return
		}
		again, err := decodeCT(encodeCT(ct))
		if err != nil || len(again) != len(ct) {
			t.Fatalf("%q: %v -> %v %v", s, ct, again, err)
		}
		for p, tk := range ct {
			if again[p] != tk {
				t.Fatalf("%q: %v -> %v", s, ct, again)
			}
		}
	})
}
