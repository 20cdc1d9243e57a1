package httpapi

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestStreams: over HTTP/1 (detached streams) and HTTP/2 (a goroutine
// per stream) alike, events arrive, keep-alive comments come every
// heartbeat period, and a client that goes away has its subscription
// removed at the router.
func TestStreams(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		name := "http1"
		if h2 {
			name = "http2"
		}
		t.Run(name, func(t *testing.T) {
			gmod := func(c *Config) { c.Heartbeat = 50 * time.Millisecond }
			var tg *testGateway
			if h2 {
				tg = startGatewayH2(t, gmod)
			} else {
				tg = startGateway(t, nil, gmod)
			}
			s := tg.mustSubscribe("filter="+url.QueryEscape("n > 1"), nil)
			if proto := s.res.Proto; (proto == "HTTP/2.0") != h2 {
				t.Fatalf("served as %s", proto)
			}
			for range 3 {
				select {
				case c := <-s.comments:
					if c != " keep-alive" {
						t.Fatalf("comment %q", c)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("no keep-alive comment within 5s")
				}
			}
			tg.mustPublish("", jsonLines(`{"n":1}`, `{"n":2}`), 2)
			if m := s.next(false); m.data != `{"n":2}` {
				t.Fatalf("got %+v", m)
			}
			waitSubs := func(want int) {
				t.Helper()
				deadline := time.Now().Add(10 * time.Second)
				for {
					st, err := tg.gw.Status(t.Context())
					if err != nil {
						t.Fatal(err)
					}
					if st.Subscriptions == want && st.Gateway.Subscribers == int64(want) {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("%d subscriptions, %d streams; want %d", st.Subscriptions, st.Gateway.Subscribers, want)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			waitSubs(1)
			s.close()
			waitSubs(0)
		})
	}
}

// TestSlowConsumer: a stream with more undelivered events than its buffer
// (SubscriberBuffer 1 here; one publish batch of 200 matching events) is
// ended with an "end" message naming the reason, its subscription is
// removed.
func TestSlowConsumer(t *testing.T) {
	tg := startGateway(t, nil, func(c *Config) { c.SubscriberBuffer = 1 })
	slow := tg.mustSubscribe("filter="+url.QueryEscape("n >= 0"), nil)
	tg.mustPublish("", seqLinesN(200), 200)
	var end sseMsg
	for {
		m := slow.next(false)
		if m.event != "" {
			end = m
			break
		}
	}
	if end.event != "end" || !strings.Contains(end.data, "slow consumer") {
		t.Fatalf("got %+v, want an end message for a slow consumer", end)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := tg.gw.Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if st.Subscriptions == 0 && st.Gateway.SlowConsumers == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the slow consumer: %d subscriptions, %d slow", st.Subscriptions, st.Gateway.SlowConsumers)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func seqLinesN(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "{\"n\":%d}\n", i)
	}
	return b.String()
}
