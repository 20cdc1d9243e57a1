package router_test

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/router/client"
)

// udpProxy forwards datagrams between one client and a router, and can
// black-hole them (a router that died without closing anything).
type udpProxy struct {
	conn    *net.UDPConn
	router  *net.UDPAddr
	blocked atomic.Bool
}

func newUDPProxy(t *testing.T, routerAddr string) *udpProxy {
	t.Helper()
	ra, err := net.ResolveUDPAddr("udp", routerAddr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	p := &udpProxy{conn: c, router: ra}
	t.Cleanup(func() { c.Close() })
	go p.run()
	return p
}

// run relays: datagrams from the router go to the last client address
// seen, the others to the router, each through its own upstream socket.
func (p *udpProxy) run() {
	up, err := net.DialUDP("udp", nil, p.router)
	if err != nil {
		return
	}
	defer up.Close()
	var client atomic.Pointer[net.UDPAddr]
	go func() {
		buf := make([]byte, 65536)
		for {
			n, err := up.Read(buf)
			if err != nil {
				return
			}
			if a := client.Load(); a != nil && !p.blocked.Load() {
				p.conn.WriteToUDP(buf[:n], a)
			}
		}
	}()
	buf := make([]byte, 65536)
	for {
		n, a, err := p.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		client.Store(a)
		if !p.blocked.Load() {
			up.Write(buf[:n])
		}
	}
}

// TestDurableHeartbeat: a durable subscriber whose router goes silent
// (every datagram dropped for 3 s, far less than the connection's 30 s
// idle timeout) takes the router for gone after its 1 s heartbeat
// allowance (the router beats every 250 ms: the margin covers a loaded
// machine's scheduling delays) and reconnects once datagrams flow again:
// the router sees a new session. Without heartbeats the old connection
// would simply resume (QUIC outlives a 3 s outage), keeping its session.
func TestDurableHeartbeat(t *testing.T) {
	env := start(t, durableOn(map[string]string{"a": "local"}, "local"))
	ctx := testCtx(t)
	proxy := newUDPProxy(t, env.Addr)
	opts := durableOpts(env, proxy.conn.LocalAddr().String())
	opts.IdleTimeout, opts.Heartbeat = 30*time.Second, time.Second
	s, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{DurableOptions: opts, ID: "hb", Filter: `x == 1`})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	session := func() uint64 {
		st, err := env.Router.Durable(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, sub := range st.Subscribers {
			if sub.ID == "hb" && sub.Connected {
				return sub.Session
			}
		}
		return 0
	}
	var first uint64
	for first == 0 {
		if first = session(); first == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Idle, with heartbeats flowing, the session stays.
	time.Sleep(2 * time.Second)
	if got := session(); got != first {
		t.Fatalf("an idle subscriber reconnected (session %d -> %d) while the router was heard", first, got)
	}
	proxy.blocked.Store(true)
	time.Sleep(3 * time.Second)
	proxy.blocked.Store(false)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if got := session(); got != 0 && got != first {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the subscriber kept session %d after its router was silent for 3 s", first)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
