// Package lossy is netem in user space: a UDP relay that forwards the
// datagrams of one point-to-point path with a delay, a random jitter and a
// loss rate, in both directions. Tests use it to put delay and loss on
// router links where the kernel has no sch_netem.
//
// A Relay listens on one socket and forwards what it receives there to a
// fixed target from a second socket; what the target answers goes back to
// the latest source heard from. It therefore models a link with one client
// at a time (a router dialling its parent, say); a client that restarts
// on a new port takes the path over. Both sockets are made by Listen, so a
// relay created inside a network namespace stays entirely in it.
//
// Jitter reorders datagrams as netem's does: each one is delayed by
// Delay plus a uniform draw from [-Jitter, Jitter], independently.
// Without jitter datagrams leave in the order they came, as under netem. The
// draws come from a seeded generator, but which datagrams they fall on
// depends on timing, so a run is not reproducible datagram for datagram.
package lossy

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Config is a relay's impairment, applied to each direction alike.
type Config struct {
	// Delay is the mean one-way delay added to every datagram.
	Delay time.Duration
	// Jitter is the largest deviation from Delay, drawn uniformly; it must
	// not exceed Delay.
	Jitter time.Duration
	// Loss is the probability in [0, 1) that a datagram is dropped.
	Loss float64
	// Seed seeds the generator of drops and delays.
	Seed uint64
}

// String renders the impairment the way netem's arguments read.
func (c Config) String() string {
	return fmt.Sprintf("delay %v %v loss %g%%", c.Delay, c.Jitter, c.Loss*100)
}

// validate refuses an impairment the relay cannot apply.
func (c Config) validate() error {
	switch {
	case c.Delay < 0 || c.Jitter < 0:
		return fmt.Errorf("lossy: negative delay %v or jitter %v", c.Delay, c.Jitter)
	case c.Jitter > c.Delay:
		return fmt.Errorf("lossy: jitter %v exceeds delay %v", c.Jitter, c.Delay)
	case !(c.Loss >= 0 && c.Loss < 1):
		return fmt.Errorf("lossy: loss %v is not in [0, 1)", c.Loss)
	}
	return nil
}

// Stats counts a relay's datagrams over both directions.
type Stats struct {
	Forwarded uint64 // delivered (or handed to a socket that refused them)
	Dropped   uint64 // lost on purpose, or beyond maxQueued waiting (no jitter)
}

// maxDatagram bounds a datagram read; larger ones are truncated by the
// kernel, which QUIC never sends (its packets stay under 1,500 bytes
// unless path MTU discovery finds more, and loopback allows 64 KiB).
const maxDatagram = 64 << 10

// Relay is one impaired path: Addr is the near end, the target the far.
type Relay struct {
	cfg     Config
	near    *net.UDPConn // clients send here
	far     *net.UDPConn // connected to the target
	client  atomic.Pointer[net.UDPAddr]
	mu      sync.Mutex // guards rng
	rng     *rand.Rand
	pending sync.WaitGroup // readers and scheduled sends
	lines   [2]*line       // toward the target and the client, without jitter
	closed  atomic.Bool
	fwd     atomic.Uint64
	drop    atomic.Uint64
}

// Listen starts a relay on listen (host:port, port 0 for any) forwarding
// to target with impairment cfg. Close stops it.
func Listen(listen, target string, cfg Config) (*Relay, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	laddr, err := net.ResolveUDPAddr("udp", listen)
	if err != nil {
		return nil, fmt.Errorf("lossy: listen address: %w", err)
	}
	taddr, err := net.ResolveUDPAddr("udp", target)
	if err != nil {
		return nil, fmt.Errorf("lossy: target address: %w", err)
	}
	near, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return nil, fmt.Errorf("lossy: listen: %w", err)
	}
	far, err := net.DialUDP("udp", nil, taddr)
	if err != nil {
		near.Close()
		return nil, fmt.Errorf("lossy: dial target: %w", err)
	}
	r := &Relay{cfg: cfg, near: near, far: far, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
	if cfg.Delay > 0 && cfg.Jitter == 0 {
		r.lines = [2]*line{newLine(r.toTarget, r.closed.Load), newLine(r.toClient, r.closed.Load)}
	}
	r.pending.Add(2)
	go r.pump(near, r.toTarget, r.lines[0])
	go r.pump(far, r.toClient, r.lines[1])
	return r, nil
}

// Addr is the address clients send to.
func (r *Relay) Addr() *net.UDPAddr { return r.near.LocalAddr().(*net.UDPAddr) }

// Stats returns the counts so far.
func (r *Relay) Stats() Stats { return Stats{Forwarded: r.fwd.Load(), Dropped: r.drop.Load()} }

// Close stops the relay and waits for its goroutines; datagrams still
// being delayed are dropped.
func (r *Relay) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	err := errors.Join(r.near.Close(), r.far.Close())
	r.pending.Wait()
	for _, l := range r.lines {
		if l != nil {
			l.stop()
		}
	}
	return err
}

// pump reads datagrams from c until it is closed and hands each to send
// after its impairment (through ln, if not nil, when there is no jitter).
func (r *Relay) pump(c *net.UDPConn, send func([]byte), ln *line) {
	defer r.pending.Done()
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := c.ReadFromUDP(buf)
		if err != nil {
			if r.closed.Load() {
				return
			}
			continue // e.g. ICMP port unreachable reported on the connected socket
		}
		if c == r.near {
			r.client.Store(from)
		}
		r.impair(append([]byte(nil), buf[:n]...), send, ln)
	}
}

// impair drops d or schedules send(d) after its delay: in order on ln
// when there is one (no jitter), on a timer of its own otherwise.
func (r *Relay) impair(d []byte, send func([]byte), ln *line) {
	r.mu.Lock()
	lost := r.rng.Float64() < r.cfg.Loss
	delay := r.cfg.Delay
	if r.cfg.Jitter > 0 {
		delay += time.Duration(r.rng.Int64N(int64(2*r.cfg.Jitter)+1)) - r.cfg.Jitter
	}
	r.mu.Unlock()
	if lost {
		r.drop.Add(1)
		return
	}
	if delay == 0 {
		send(d)
		return
	}
	if ln != nil {
		if !ln.push(time.Now().Add(delay), d) {
			r.drop.Add(1)
		}
		return
	}
	r.pending.Add(1)
	time.AfterFunc(delay, func() {
		defer r.pending.Done()
		if !r.closed.Load() {
			send(d)
		}
	})
}

// toTarget sends d on toward the target. Errors (the path is down, say)
// lose the datagram, as a wire would.
func (r *Relay) toTarget(d []byte) {
	r.fwd.Add(1)
	r.far.Write(d)
}

// toClient sends d back to the latest client, if one has been heard from.
func (r *Relay) toClient(d []byte) {
	if c := r.client.Load(); c != nil {
		r.fwd.Add(1)
		r.near.WriteToUDP(d, c)
	}
}
