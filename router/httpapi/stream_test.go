package httpapi

import (
	"net/url"
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
