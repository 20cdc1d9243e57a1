package httpapi

import (
	"encoding/json"
	"net/url"
	"reflect"
	"testing"
)

// TestCloudEventsIn: structured and binary mode map onto attributes as
// the gateway promises: context and extension attributes by name, a flat
// JSON object's members as data.*, other data as the opaque payload.
func TestCloudEventsIn(t *testing.T) {
	tg := startGateway(t, nil, nil)
	s := tg.mustSubscribe("filter="+url.QueryEscape(`type prefix "com.example"`), nil)
	cases := []struct {
		name, ctype, body string
		hdr               map[string]string
		want              string
	}{
		{"structured flat data", ceJSON,
			`{"specversion":"1.0","id":"a1","source":"/shop","type":"com.example.order","subject":"o-7","time":"2026-12-01T20:00:00Z","region":"eu","priority":3,"data":{"sku":"X1","qty":2,"price":9.5}}`, nil,
			`{"data.price":9.5,"data.qty":2,"data.sku":"X1","id":"a1","priority":3,"region":"eu","source":"/shop","specversion":"1.0","subject":"o-7","time":"2026-12-01T20:00:00Z","type":"com.example.order"}`},
		{"structured nested data is opaque", ceJSON,
			`{"specversion":"1.0","id":"a2","source":"/shop","type":"com.example.x","datacontenttype":"application/json","data":{"a":{"b":1}}}`, nil,
			`{"data_json":"{\"a\":{\"b\":1}}","datacontenttype":"application/json","id":"a2","source":"/shop","specversion":"1.0","type":"com.example.x"}`},
		{"structured string data", ceJSON,
			`{"specversion":"1.0","id":"a3","source":"/s","type":"com.example.s","data":"hello"}`, nil,
			`{"data":"hello","id":"a3","source":"/s","specversion":"1.0","type":"com.example.s"}`},
		{"structured base64", ceJSON,
			`{"specversion":"1.0","id":"a4","source":"/s","type":"com.example.b","data_base64":"AAEC"}`, nil,
			`{"data_base64":"AAEC","id":"a4","source":"/s","specversion":"1.0","type":"com.example.b"}`},
		{"binary json flat", "application/json", `{"sku":"Y","qty":1}`,
			map[string]string{"ce-specversion": "1.0", "ce-id": "b1", "ce-source": "/shop", "ce-type": "com.example.order", "ce-region": "us%20east"},
			`{"data.qty":1,"data.sku":"Y","datacontenttype":"application/json","id":"b1","region":"us east","source":"/shop","specversion":"1.0","type":"com.example.order"}`},
		{"binary text", "text/plain", "plain words",
			map[string]string{"Ce-Specversion": "1.0", "Ce-Id": "b2", "Ce-Source": "/s", "Ce-Type": "com.example.t"},
			`{"data":"plain words","datacontenttype":"text/plain","id":"b2","source":"/s","specversion":"1.0","type":"com.example.t"}`},
		{"binary bytes", "application/octet-stream", "\xff\x00\x01",
			map[string]string{"ce-specversion": "1.0", "ce-id": "b3", "ce-source": "/s", "ce-type": "com.example.o"},
			`{"data_base64":"/wAB","datacontenttype":"application/octet-stream","id":"b3","source":"/s","specversion":"1.0","type":"com.example.o"}`},
	}
	for _, c := range cases {
		code, out := tg.post("", c.ctype, c.body, c.hdr)
		if code != 200 || out["accepted"] != float64(1) {
			t.Fatalf("%s: %d %v", c.name, code, out)
		}
		if m := s.next(false); m.data != c.want {
			t.Fatalf("%s:\n got %s\nwant %s", c.name, m.data, c.want)
		}
	}
	code, out := tg.post("", ceBatchJSON, `[{"specversion":"1.0","id":"c1","source":"/s","type":"com.example.1"},{"specversion":"1.0","id":"c2","source":"/s","type":"other"}]`, nil)
	if code != 200 || out["accepted"] != float64(2) {
		t.Fatalf("batch: %d %v", code, out)
	}
	if m := s.next(false); m.data != `{"id":"c1","source":"/s","specversion":"1.0","type":"com.example.1"}` {
		t.Fatalf("batch: got %s", m.data)
	}
	// Filtering on data.* attributes works like on any attribute.
	d := tg.mustSubscribe("filter="+url.QueryEscape(`data.qty >= 2`), nil)
	tg.post("", ceJSON, `{"specversion":"1.0","id":"q1","source":"/s","type":"t","data":{"qty":1}}`, nil)
	tg.post("", ceJSON, `{"specversion":"1.0","id":"q2","source":"/s","type":"t","data":{"qty":5}}`, nil)
	if m := d.next(false); m.data != `{"data.qty":5,"id":"q2","source":"/s","specversion":"1.0","type":"t"}` {
		t.Fatalf("data.qty filter: got %s", m.data)
	}
}

// TestCloudEventsOut: with Accept: application/cloudevents+json or
// &format=ce each event arrives as a structured CloudEvent: a CloudEvent
// published comes back as it was sent, a plain event gets the required
// attributes filled in.
func TestCloudEventsOut(t *testing.T) {
	tg := startGateway(t, nil, nil)
	byAccept := tg.mustSubscribe("filter=*", map[string]string{"Accept": ceJSON})
	byFormat := tg.mustSubscribe("filter=*&format=ce", nil)
	sent := []string{
		`{"specversion":"1.0","id":"a1","source":"/shop","type":"com.example.order","region":"eu","datacontenttype":"application/json","data":{"sku":"X1","qty":2}}`,
		`{"specversion":"1.0","id":"a2","source":"/shop","type":"com.example.x","data":{"a":[1,2]}}`,
		`{"specversion":"1.0","id":"a3","source":"/shop","type":"com.example.s","data":"text"}`,
		`{"specversion":"1.0","id":"a4","source":"/shop","type":"com.example.b","data_base64":"AAEC"}`,
	}
	for _, body := range sent {
		if code, out := tg.post("", ceJSON, body, nil); code != 200 {
			t.Fatalf("%d %v", code, out)
		}
	}
	tg.mustPublish("", `{"symbol":"IBM","price":9.5}`, 1)
	for _, s := range []*sseStream{byAccept, byFormat} {
		for _, body := range sent {
			m := s.next(false)
			var got, want map[string]any
			if err := json.Unmarshal([]byte(m.data), &got); err != nil {
				t.Fatalf("%s: %v", m.data, err)
			}
			json.Unmarshal([]byte(body), &want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round trip:\n got %s\nwant %s", m.data, body)
			}
		}
		m := s.next(false)
		var got map[string]any
		json.Unmarshal([]byte(m.data), &got)
		if got["specversion"] != "1.0" || got["source"] != "/sift/r1" || got["type"] != "sift.event" || got["id"] == "" || got["symbol"] != "IBM" || got["price"] != 9.5 {
			t.Fatalf("plain event as CloudEvent: %s", m.data)
		}
	}
}
