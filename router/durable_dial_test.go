package router_test

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/router/client"
)

// delayProxy relays UDP datagrams between clients and a router, holding
// each one for delay in either direction: a router whose handshake takes
// several times 2*delay, as a loaded one does.
type delayProxy struct {
	t      *testing.T
	pc     net.PacketConn
	target *net.UDPAddr
	delay  time.Duration

	mu  sync.Mutex
	ups map[string]*net.UDPConn // client address -> its socket toward the router
}

func startDelayProxy(t *testing.T, target string, delay time.Duration) *delayProxy {
	t.Helper()
	ta, err := net.ResolveUDPAddr("udp", target)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &delayProxy{t: t, pc: pc, target: ta, delay: delay, ups: map[string]*net.UDPConn{}}
	t.Cleanup(p.close)
	go p.fromClients()
	return p
}

func (p *delayProxy) addr() string { return p.pc.LocalAddr().String() }

func (p *delayProxy) close() {
	p.pc.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, up := range p.ups {
		up.Close()
	}
}

// fromClients relays every client datagram to the router, late.
func (p *delayProxy) fromClients() {
	buf := make([]byte, 64<<10)
	for {
		n, from, err := p.pc.ReadFrom(buf)
		if err != nil {
			return
		}
		up, err := p.upstream(from)
		if err != nil {
			return
		}
		pkt := append([]byte(nil), buf[:n]...)
		time.AfterFunc(p.delay, func() { up.Write(pkt) })
	}
}

// upstream returns the socket relaying one client's datagrams, starting
// the relay of the router's answers to it on first use.
func (p *delayProxy) upstream(client net.Addr) (*net.UDPConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if up, ok := p.ups[client.String()]; ok {
		return up, nil
	}
	up, err := net.DialUDP("udp", nil, p.target)
	if err != nil {
		return nil, err
	}
	p.ups[client.String()] = up
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := up.Read(buf)
			if err != nil {
				return
			}
			pkt := append([]byte(nil), buf[:n]...)
			time.AfterFunc(p.delay, func() { p.pc.WriteTo(pkt, client) })
		}
	}()
	return up, nil
}

// TestDurableSubscribeSlowHandshake: a router that answers, but whose
// handshake (QUIC's and the client hello) takes longer than DialTimeout,
// is still reached: an attempt that ran out of its bound gives the next
// one at that router twice as long. With a fixed bound every attempt was
// cut short (and left the router a handshake to finish for nothing): the
// churn benchmark's subscribers, reconnecting to a loaded SHB, never got
// back.
func TestDurableSubscribeSlowHandshake(t *testing.T) {
	env := start(t, durableOn(map[string]string{"a": "local"}, "local"))
	proxy := startDelayProxy(t, env.Addr, 100*time.Millisecond) // a round trip of 200 ms
	ctx := testCtx(t)
	opts := durableOpts(env, proxy.addr())
	opts.DialTimeout, opts.RetryTimeout = 150*time.Millisecond, 10*time.Second
	s, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{DurableOptions: opts, ID: "slow", Filter: `symbol == "IBM"`})
	if err != nil {
		t.Fatalf("subscribe through a handshake slower than DialTimeout: %v", err)
	}
	defer s.Close()
	select {
	case m := <-s.Messages():
		if m.Kind != client.DurableStart {
			t.Fatalf("first message %v, want the start", m.Kind)
		}
	case <-ctx.Done():
		t.Fatal("no start")
	}
	if s.Router() != "local" {
		t.Fatalf("connected to %q, want local", s.Router())
	}
}
