package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/router"
)

// readSeqs reads n events of a durable stream, returning their seq values
// and the id of the last one.
func readSeqs(t *testing.T, s *sseStream, n int) ([]string, string) {
	t.Helper()
	var seqs []string
	var last string
	for len(seqs) < n {
		m := s.next(false)
		if m.event != "" {
			t.Fatalf("unexpected %s message %+v", m.event, m)
		}
		if !m.hasID || m.id == "" {
			t.Fatalf("durable event without id: %+v", m)
		}
		if _, err := decodeCT(m.id); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, strings.TrimSuffix(strings.TrimPrefix(m.data, `{"seq":`), `}`))
		last = m.id
	}
	return seqs, last
}

func want(from, to int) string {
	var s []string
	for i := from; i <= to; i++ {
		s = append(s, fmt.Sprint(i))
	}
	return strings.Join(s, " ")
}

// TestDurableResumeAcrossRestart: a durable SSE subscriber (&ack=client)
// reads part of what was published durably (the rest was written to its
// connection but not read), leaves, and comes back with Last-Event-ID
// after the router was stopped and started again on its data folder
// (events published while it was away, before and after the restart):
// it gets every later event exactly once, in order, none twice.
func TestDurableResumeAcrossRestart(t *testing.T) {
	tg := startGateway(t, nil, nil)
	q := "filter=" + url.QueryEscape("seq >= 1") + "&durable=d1&ack=client"
	s := tg.mustSubscribe(q, nil)
	tg.mustPublish("?durable=1", seqEvents(1, 10, ""), 10)
	tg.mustPublish("?durable=1", `{"seq":0}`, 1) // does not match
	got, last := readSeqs(t, s, 6)
	if strings.Join(got, " ") != want(1, 6) {
		t.Fatalf("first session got %v", got)
	}
	s.close()
	tg.mustPublish("?durable=1", seqEvents(11, 15, ""), 5)
	tg.restart(nil, nil)
	tg.mustPublish("?durable=1", seqEvents(16, 20, ""), 5)
	s2 := tg.mustSubscribe(q, map[string]string{"Last-Event-ID": last})
	got, last = readSeqs(t, s2, 14)
	if strings.Join(got, " ") != want(7, 20) {
		t.Fatalf("after the restart got %v, want %s", got, want(7, 20))
	}
	s2.none(300 * time.Millisecond)
	tg.mustPublish("?durable=1", seqEvents(21, 21, ""), 1)
	got, _ = readSeqs(t, s2, 1)
	if got[0] != "21" {
		t.Fatalf("live event after catch-up: %v", got)
	}
	// The same id with another filter is refused; so is a plain
	// subscription's format check on a durable one.
	if _, code, body := tg.subscribe("filter="+url.QueryEscape("seq >= 2")+"&durable=d1", nil); code != 409 || !strings.Contains(body, "refused") {
		t.Fatalf("d1 with another filter: %d %s", code, body)
	}
	_ = last
}

// TestDurableAutoAckResume: with the default acknowledgements (each token
// once flushed), a subscriber that read everything it was sent, left, and
// came back with its Last-Event-ID after a router restart gets exactly the
// events published meanwhile.
func TestDurableAutoAckResume(t *testing.T) {
	tg := startGateway(t, nil, nil)
	q := "filter=" + url.QueryEscape("seq >= 1") + "&durable=auto1"
	s := tg.mustSubscribe(q, nil)
	tg.mustPublish("?durable=1", seqEvents(1, 10, ""), 10)
	got, last := readSeqs(t, s, 10)
	if strings.Join(got, " ") != want(1, 10) {
		t.Fatalf("first session got %v", got)
	}
	time.Sleep(300 * time.Millisecond) // acknowledgements reach the SHB, release may run
	s.close()
	tg.mustPublish("?durable=1", seqEvents(11, 13, ""), 3)
	tg.restart(nil, nil)
	tg.mustPublish("?durable=1", seqEvents(14, 15, ""), 2)
	s2 := tg.mustSubscribe(q, map[string]string{"Last-Event-ID": last})
	got, _ = readSeqs(t, s2, 5)
	if strings.Join(got, " ") != want(11, 15) {
		t.Fatalf("after the restart got %v, want %s", got, want(11, 15))
	}
	s2.none(300 * time.Millisecond)
}

// TestDurableClientAck: with &ack=client the SHB's window of
// unacknowledged events (SubQueue 8 here) holds the stream back until the
// client confirms with POST /v1/ack; then the rest arrives. Bad ack
// requests are refused.
func TestDurableClientAck(t *testing.T) {
	tg := startGateway(t, func(c *router.Config) { c.Durable.SubQueue = 8 }, nil)
	q := "filter=" + url.QueryEscape("seq >= 1") + "&durable=w1&ack=client"
	s := tg.mustSubscribe(q, nil)
	tg.mustPublish("?durable=1", seqEvents(1, 20, ""), 20)
	got, last := readSeqs(t, s, 8)
	if strings.Join(got, " ") != want(1, 8) {
		t.Fatalf("got %v", got)
	}
	s.none(500 * time.Millisecond) // the window is full
	ack := func(query string, hdr map[string]string) int {
		req, _ := http.NewRequest("POST", tg.srv.URL+"/v1/ack"+query, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if c := ack("?durable=w1", nil); c != 400 {
		t.Fatalf("ack without token: %d", c)
	}
	if c := ack("?durable=w1", map[string]string{"Last-Event-ID": "x=y"}); c != 400 {
		t.Fatalf("ack with a bad token: %d", c)
	}
	if c := ack("?durable=nobody", map[string]string{"Last-Event-ID": last}); c != 404 {
		t.Fatalf("ack of no session: %d", c)
	}
	if c := ack("?durable=w1", map[string]string{"Last-Event-ID": last}); c != 204 {
		t.Fatalf("ack: %d", c)
	}
	got, last = readSeqs(t, s, 8)
	if strings.Join(got, " ") != want(9, 16) {
		t.Fatalf("after the ack got %v", got)
	}
	if c := ack("?durable=w1&last_event_id="+url.QueryEscape(last), nil); c != 204 {
		t.Fatalf("ack: %d", c)
	}
	got, _ = readSeqs(t, s, 4)
	if strings.Join(got, " ") != want(17, 20) {
		t.Fatalf("after the second ack got %v", got)
	}
}

// TestDurableGap: with early release, a durable subscriber away for
// longer than the retention resumes with its old Last-Event-ID and gets
// an "event: gap" message naming the released range, then the events
// above it.
func TestDurableGap(t *testing.T) {
	tg := startGateway(t, func(c *router.Config) {
		c.Durable.MaxRetain = 200 * time.Millisecond
		c.Durable.ReportInterval = 20 * time.Millisecond
	}, nil)
	q := "filter=" + url.QueryEscape("seq >= 1") + "&durable=g1"
	s := tg.mustSubscribe(q, nil)
	tg.mustPublish("?durable=1", seqEvents(1, 2, ""), 2)
	_, last := readSeqs(t, s, 2)
	s.close()
	tg.mustPublish("?durable=1", seqEvents(3, 5, ""), 3)
	deadline := time.Now().Add(20 * time.Second)
	for {
		time.Sleep(300 * time.Millisecond) // let the retention pass and release run
		s2 := tg.mustSubscribe(q, map[string]string{"Last-Event-ID": last})
		m := s2.next(false)
		if m.event == "gap" {
			if !strings.Contains(m.data, `"pubend":"r1"`) || !strings.Contains(m.data, `"from":`) || !strings.Contains(m.data, `"to":`) || m.id == "" {
				t.Fatalf("gap message %+v", m)
			}
			tg.mustPublish("?durable=1", seqEvents(6, 6, ""), 1)
			for {
				m = s2.next(false)
				if m.event == "gap" {
					continue
				}
				if m.data != `{"seq":6}` {
					t.Fatalf("after the gap: %+v (events 3-5 were released, 6 is new)", m)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no gap after 20s; got %+v", m)
		}
		s2.close()
	}
}
