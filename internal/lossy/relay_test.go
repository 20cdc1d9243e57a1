package lossy

import (
	"bytes"
	"fmt"
	"net"
	"testing"
	"time"
)

// echo starts a UDP server on loopback that sends every datagram back,
// and returns its address.
func echo(t *testing.T) string {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, maxDatagram)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			c.WriteToUDP(buf[:n], from)
		}
	}()
	return c.LocalAddr().String()
}

// start is Listen on loopback toward target, closed at the end of the test.
func start(t *testing.T, target string, cfg Config) *Relay {
	t.Helper()
	r, err := Listen("127.0.0.1:0", target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// client dials r.
func client(t *testing.T, r *Relay) *net.UDPConn {
	t.Helper()
	c, err := net.DialUDP("udp", nil, r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRelayCarriesBothWaysInOrder(t *testing.T) {
	r := start(t, echo(t), Config{Delay: time.Millisecond})
	c := client(t, r)
	for i := range 50 {
		msg := []byte(fmt.Sprintf("datagram %d", i))
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 100)
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
		if !bytes.Equal(buf[:n], msg) {
			t.Fatalf("got %q, want %q", buf[:n], msg)
		}
	}
	if s := r.Stats(); s.Forwarded != 100 || s.Dropped != 0 {
		t.Fatalf("stats %+v, want 100 forwarded (50 each way), 0 dropped", s)
	}
}

func TestRelayDelays(t *testing.T) {
	const delay = 20 * time.Millisecond
	r := start(t, echo(t), Config{Delay: delay, Jitter: 5 * time.Millisecond, Seed: 1})
	c := client(t, r)
	for range 5 {
		begin := time.Now()
		c.Write([]byte("x"))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 10)); err != nil {
			t.Fatal(err)
		}
		// Two one-way trips, each at least Delay - Jitter.
		if rtt := time.Since(begin); rtt < 2*(delay-5*time.Millisecond) {
			t.Fatalf("round trip %v, shorter than two delays less jitter", rtt)
		}
	}
}

// TestRelayLoses sends datagrams toward a target that counts them: the
// relay must drop about the configured share, and its counts must add up
// to what was sent.
func TestRelayLoses(t *testing.T) {
	sink, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	const sent, loss = 4000, 0.25
	r := start(t, sink.LocalAddr().String(), Config{Loss: loss, Seed: 7})
	c := client(t, r)
	got := make(chan int)
	go func() {
		n := 0
		buf := make([]byte, 16)
		for {
			sink.SetReadDeadline(time.Now().Add(time.Second))
			if _, err := sink.Read(buf); err != nil {
				got <- n
				return
			}
			n++
		}
	}()
	// Bursts of 100 stay far under the relay's socket buffer; waiting for
	// the relay to account for each burst before the next keeps the kernel
	// from dropping any however slowly the relay's goroutine is scheduled,
	// so every datagram sent is one the relay saw.
	for i := range sent {
		c.Write([]byte{byte(i)})
		if i%100 == 99 {
			waitCounted(t, r, uint64(i+1))
		}
	}
	received := <-got
	s := r.Stats()
	if s.Forwarded+s.Dropped != sent {
		t.Fatalf("stats %+v do not add up to %d sent", s, sent)
	}
	if share := float64(s.Dropped) / sent; share < loss-0.05 || share > loss+0.05 {
		t.Fatalf("dropped %.3f of datagrams, want about %.2f", share, loss)
	}
	if uint64(received) > s.Forwarded {
		t.Fatalf("sink received %d, more than the %d forwarded", received, s.Forwarded)
	}
}

// waitCounted waits until r has forwarded or dropped n datagrams.
func waitCounted(t *testing.T, r *Relay, n uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := r.Stats()
		if s.Forwarded+s.Dropped >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("relay counted %+v after 10 s, want %d datagrams", s, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestConfigRefused(t *testing.T) {
	for _, cfg := range []Config{
		{Delay: -time.Millisecond},
		{Delay: time.Millisecond, Jitter: 2 * time.Millisecond},
		{Loss: 1},
		{Loss: -0.1},
	} {
		if r, err := Listen("127.0.0.1:0", "127.0.0.1:9", cfg); err == nil {
			r.Close()
			t.Errorf("%+v: accepted", cfg)
		}
	}
	if _, err := Listen("127.0.0.1:0", "no-such-host.invalid:1", Config{}); err == nil {
		t.Error("unresolvable target accepted")
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	r := start(t, echo(t), Config{Delay: 50 * time.Millisecond})
	c := client(t, r)
	c.Write([]byte("in flight at close"))
	time.Sleep(5 * time.Millisecond)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
