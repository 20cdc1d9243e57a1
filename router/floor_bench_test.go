package router

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/router/certs"
)

// The transport floor of the issue 6 and 7 benchmarks: the same bytes
// moved over the same QUIC configuration (TLS 1.3, mutual TLS, the
// router's windows), with nothing decoded, matched or encoded. Relays
// forward opaque length-prefixed frames; the last one fans each event out
// to floorFanout of floorSubs subscriber connections. Whatever CPU per
// event this costs, no router built on quic-go can spend less on this
// machine, so it bounds the events/s any implementation can reach.
//
// The shape is that of BenchmarkThroughput/stock-10x1000, computed from
// its 20,000 events and 10,000 filters: an event (~200 bytes as JSON) is
// 173 bytes in the binary encoding; publish frames of up to 512 events;
// 0.84 % selectivity, 6.18 connection deliveries per event (here 6), each
// the event plus its ~13.5 subscription ids (199 bytes). In BenchmarkChain
// only the events some subscriber matches (86 %) cross a and b; here every
// one does, so the three-relay figure counts ~16 % more link bytes than a
// router must move.
//
//	go test -run XXX -bench TransportFloor -benchtime 200000x ./router
const (
	floorEventBytes    = 173
	floorDeliveryBytes = 199
	floorBatch         = 512
	floorSubs          = 10
	floorFanout        = 6
)

// BenchmarkTransportFloor reports events/s and CPU seconds per million
// events of the whole process (publisher, relays and subscribers) for one
// relay (issue 6's single router) and three (issue 7's chain).
func BenchmarkTransportFloor(b *testing.B) {
	for _, relays := range []int{1, 3} {
		b.Run(fmt.Sprintf("relays=%d", relays), func(b *testing.B) { benchFloor(b, relays) })
	}
}

func benchFloor(b *testing.B, relays int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	server, client := floorTLS(b)
	qconf := quicConfig(Config{IdleTimeout: 30 * time.Second, KeepAlive: 10 * time.Second, HandshakeTimeout: 10 * time.Second})
	addrs := make([]string, relays)
	lns := make([]*quic.Listener, relays)
	for i := range relays {
		ln, err := quic.ListenAddr("127.0.0.1:0", server, qconf)
		if err != nil {
			b.Fatal(err)
		}
		defer ln.Close()
		lns[i], addrs[i] = ln, ln.Addr().String()
	}
	var wg sync.WaitGroup
	errs := make(chan error, relays+floorSubs+1)
	run := func(f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil && ctx.Err() == nil {
				errs <- err
			}
		}()
	}
	for i := range relays - 1 {
		run(func() error { return floorForward(ctx, lns[i], addrs[i+1], client, qconf) })
	}
	subs := make([]*quic.Stream, floorSubs)
	received := make(chan struct{}, floorSubs)
	want := floorWanted(b.N)
	for s := range floorSubs {
		st, err := floorDial(ctx, addrs[relays-1], byte(s), client, qconf)
		if err != nil {
			b.Fatal(err)
		}
		subs[s] = st
		run(func() error { return floorReceive(st, want[s], received) })
	}
	run(func() error { return floorFanOut(ctx, lns[relays-1], floorSubs) })
	pub, err := floorDial(ctx, addrs[0], roleUpstream, client, qconf)
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuclock.Process()
	b.ResetTimer()
	start := time.Now()
	if err := floorPublish(pub, b.N); err != nil {
		b.Fatal(err)
	}
	for range floorSubs {
		select {
		case <-received:
		case err := <-errs:
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cpu := cpuclock.Process() - cpu0
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(cpu.Seconds()/float64(b.N)*1e6, "cpu-s/Mevents")
	b.ReportMetric(0, "ns/op")
	cancel()
	floorConns.closeAll()
	for _, ln := range lns {
		ln.Close()
	}
	wg.Wait()
}

// floorConns holds every connection a floor run opened or accepted, so
// the end of the run can close them and unblock the relays' reads.
var floorConns connSet

type connSet struct {
	mu    sync.Mutex
	conns []*quic.Conn
}

func (s *connSet) add(c *quic.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns = append(s.conns, c)
}

func (s *connSet) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.CloseWithError(0, "done")
	}
	s.conns = nil
}

// floorTLS returns a router's and a client's TLS configuration of one
// fresh deployment.
func floorTLS(b *testing.B) (server, client *tls.Config) {
	dir := b.TempDir()
	if err := certs.Init(dir, nil); err != nil {
		b.Fatal(err)
	}
	node, err := certs.Load(dir, certs.Node)
	if err != nil {
		b.Fatal(err)
	}
	cl, err := certs.Load(dir, certs.Client)
	if err != nil {
		b.Fatal(err)
	}
	return node.ServerConfig(nil), cl.ClientConfig()
}

// roleUpstream is the first byte of an upstream stream; a subscriber's
// stream starts with its index, so the fan-out knows which events it gets.
const roleUpstream byte = 255

// floorDial connects to a relay and opens the stream it will read or
// write; the first byte sent (its role: roleUpstream or a subscriber's
// index) makes the stream known to the relay.
func floorDial(ctx context.Context, addr string, role byte, conf *tls.Config, qconf *quic.Config) (*quic.Stream, error) {
	conn, err := quic.DialAddr(ctx, addr, conf, qconf)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	floorConns.add(conn)
	st, err := conn.OpenStreamSync(ctx)
	if err != nil {
		return nil, fmt.Errorf("open stream to %s: %w", addr, err)
	}
	if _, err := st.Write([]byte{role}); err != nil {
		return nil, fmt.Errorf("announce stream to %s: %w", addr, err)
	}
	return st, nil
}

// floorAccept accepts one connection and its first stream, and returns
// the role the stream announced.
func floorAccept(ctx context.Context, ln *quic.Listener) (*quic.Stream, byte, error) {
	conn, err := ln.Accept(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("accept: %w", err)
	}
	floorConns.add(conn)
	st, err := conn.AcceptStream(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("accept stream: %w", err)
	}
	var first [1]byte
	if _, err := io.ReadFull(st, first[:]); err != nil {
		return nil, 0, fmt.Errorf("read announce: %w", err)
	}
	return st, first[0], nil
}

// floorPublish writes n events in frames of up to floorBatch events.
func floorPublish(st *quic.Stream, n int) error {
	frame := make([]byte, 4+floorBatch*floorEventBytes)
	for sent := 0; sent < n; {
		k := min(floorBatch, n-sent)
		body := k * floorEventBytes
		binary.BigEndian.PutUint32(frame, uint32(body))
		if _, err := st.Write(frame[:4+body]); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		sent += k
	}
	return nil
}

// floorForward relays every frame from the one upstream connection it
// accepts to the next relay, unchanged, through a writer goroutine (as a
// router's link writer).
func floorForward(ctx context.Context, ln *quic.Listener, next string, conf *tls.Config, qconf *quic.Config) error {
	up, _, err := floorAccept(ctx, ln)
	if err != nil {
		return err
	}
	down, err := floorDial(ctx, next, roleUpstream, conf, qconf)
	if err != nil {
		return err
	}
	w := newFloorWriter(ctx, down, 4+floorBatch*floorEventBytes)
	defer w.stop()
	for {
		buf := w.buffer()
		if buf == nil {
			return w.err
		}
		frame, err := floorReadFrame(up, buf)
		if err != nil {
			return err
		}
		w.write(frame)
	}
}

// floorFanOut accepts subs subscriber connections and the upstream one,
// and writes each upstream frame's events to the subscribers they go to
// (floorGoesTo), one frame per subscriber per upstream frame, each
// subscriber through its own writer goroutine, as the router's writers do.
func floorFanOut(ctx context.Context, ln *quic.Listener, subs int) error {
	var up *quic.Stream
	down := make([]*floorWriter, subs)
	for range subs + 1 {
		st, role, err := floorAccept(ctx, ln)
		switch {
		case err != nil:
			return err
		case role == roleUpstream:
			up = st
		case int(role) < subs:
			down[role] = newFloorWriter(ctx, st, 4+floorBatch*floorDeliveryBytes)
			defer down[role].stop()
		default:
			return fmt.Errorf("fan-out: stream announced role %d", role)
		}
	}
	in := make([]byte, 4+floorBatch*floorEventBytes)
	next := 0
	for {
		frame, err := floorReadFrame(up, in)
		if err != nil {
			return err
		}
		n := (len(frame) - 4) / floorEventBytes
		for s, w := range down {
			k := 0
			for j := next; j < next+n; j++ {
				if floorGoesTo(j, s) {
					k++
				}
			}
			if k == 0 {
				continue
			}
			out := w.buffer()
			if out == nil {
				return w.err
			}
			binary.BigEndian.PutUint32(out, uint32(k*floorDeliveryBytes))
			w.write(out[:4+k*floorDeliveryBytes])
		}
		next += n
	}
}

// floorWriter writes frames to one stream from its own goroutine, with a
// few buffers cycling between the relay that fills them and the writer.
type floorWriter struct {
	st     *quic.Stream
	full   chan []byte
	free   chan []byte
	done   chan struct{}
	cancel context.CancelFunc
	err    error // set before done is closed
}

func newFloorWriter(ctx context.Context, st *quic.Stream, size int) *floorWriter {
	const buffers = 4
	ctx, cancel := context.WithCancel(ctx)
	w := &floorWriter{st: st, full: make(chan []byte, buffers), free: make(chan []byte, buffers), done: make(chan struct{}), cancel: cancel}
	for range buffers {
		w.free <- make([]byte, size)
	}
	go w.run(ctx)
	return w
}

func (w *floorWriter) run(ctx context.Context) {
	defer close(w.done)
	for {
		select {
		case <-ctx.Done():
			w.err = ctx.Err()
			return
		case frame := <-w.full:
			if _, err := w.st.Write(frame); err != nil {
				w.err = fmt.Errorf("write: %w", err)
				return
			}
			w.free <- frame[:cap(frame)]
		}
	}
}

// buffer returns a free buffer, or nil once the writer failed (w.err).
func (w *floorWriter) buffer() []byte {
	select {
	case b := <-w.free:
		return b
	case <-w.done:
		return nil
	}
}

// write hands a filled buffer to the writer.
func (w *floorWriter) write(frame []byte) { w.full <- frame }

func (w *floorWriter) stop() {
	w.cancel()
	<-w.done
}

// floorGoesTo says whether event j goes to subscriber s: floorFanout
// consecutive subscribers (mod floorSubs) per event, rotating.
func floorGoesTo(j, s int) bool { return (s-j%floorSubs+floorSubs)%floorSubs < floorFanout }

// floorWanted returns how many of n events each subscriber receives.
func floorWanted(n int) []int {
	want := make([]int, floorSubs)
	for j := range n {
		for s := range want {
			if floorGoesTo(j, s) {
				want[s]++
			}
		}
	}
	return want
}

// floorReceive reads delivery frames until want events arrived, then
// signals done.
func floorReceive(st *quic.Stream, want int, done chan<- struct{}) error {
	buf := make([]byte, 4+floorBatch*floorDeliveryBytes)
	for got := 0; got < want; {
		frame, err := floorReadFrame(st, buf)
		if err != nil {
			return err
		}
		got += (len(frame) - 4) / floorDeliveryBytes
	}
	done <- struct{}{}
	return nil
}

// floorReadFrame reads one length-prefixed frame into buf.
func floorReadFrame(r io.Reader, buf []byte) ([]byte, error) {
	if _, err := io.ReadFull(r, buf[:4]); err != nil {
		return nil, fmt.Errorf("read frame header: %w", err)
	}
	n := int(binary.BigEndian.Uint32(buf))
	if n > len(buf)-4 {
		return nil, fmt.Errorf("frame of %d bytes exceeds %d", n, len(buf)-4)
	}
	if _, err := io.ReadFull(r, buf[4:4+n]); err != nil {
		return nil, fmt.Errorf("read frame body: %w", err)
	}
	return buf[:4+n], nil
}
