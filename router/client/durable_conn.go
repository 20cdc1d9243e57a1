package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
)

// durableConn is one connection of a durable publisher or subscription:
// the handshake of a plain client, then durable frames on the control
// stream both ways.
type durableConn struct {
	qc     *quic.Conn
	ctrl   *quic.Stream
	router string
	in     chan durable.Msg // closed when the connection ends; err says why
	err    error
	wmu    sync.Mutex
	// heartbeat bounds the silence of the router (DurableOptions.Heartbeat).
	heartbeat time.Duration
}

// durableDefaults fills in DurableOptions; durable connections detect a
// dead router faster than plain ones (idle timeout 5s, keep-alive 1s) so
// that they move on quickly.
func (o DurableOptions) withDefaults() (DurableOptions, error) {
	if len(o.Routers) == 0 {
		return o, errors.New("client: DurableOptions.Routers is empty")
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 5 * time.Second
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = time.Second
	}
	var err error
	if o.Options, err = o.Options.withDefaults(); err != nil {
		return o, err
	}
	if o.RetryTimeout <= 0 {
		o.RetryTimeout = 30 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 50 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 2 * time.Second
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = 3 * time.Second
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 2 * time.Second
	}
	return o, nil
}

// dialDurable connects to one router.
func dialDurable(ctx context.Context, addr string, opts Options, heartbeat time.Duration) (*durableConn, error) {
	c := &Client{opts: opts}
	qc, err := quic.DialAddr(ctx, addr, opts.TLS.Clone(), &quic.Config{
		MaxIdleTimeout:        opts.IdleTimeout,
		KeepAlivePeriod:       opts.KeepAlive,
		MaxIncomingStreams:    -1,
		MaxIncomingUniStreams: -1,
	})
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	c.qc = qc
	if err := c.handshake(ctx); err != nil {
		qc.CloseWithError(quic.ApplicationErrorCode(wire.CodeOf(err)), err.Error())
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	dc := &durableConn{qc: qc, ctrl: c.ctrl, router: c.welcome.Name, in: make(chan durable.Msg, 256), heartbeat: heartbeat}
	go dc.read(c.ctrlFR)
	go dc.beat()
	return dc, nil
}

// read hands the router's durable messages to in until the connection
// ends, or until the router was silent (not even a heartbeat) for longer
// than c.heartbeat. Frames are read into one reused buffer and decoded by
// one decoder for the connection: a decoded message copies what it keeps
// (the decoder shares no strings with the frame), and the decoder keeps
// the events' attribute names from frame to frame, so a delivery costs
// neither a frame's allocation nor its names' copies.
func (c *durableConn) read(fr *wire.FrameReader) {
	defer close(c.in)
	var closing error
	var dec wire.EventDecoder
	for {
		if c.heartbeat > 0 {
			c.ctrl.SetReadDeadline(time.Now().Add(c.heartbeat))
		}
		m, err := readReused(fr, &dec)
		if err != nil {
			var ne net.Error
			switch {
			case closing != nil:
				c.err = closing
			case errors.As(err, &ne) && ne.Timeout():
				c.err = fmt.Errorf("router %s silent for %v (no heartbeat): taken for gone", c.router, c.heartbeat)
			case errors.Is(err, io.EOF):
				c.err = fmt.Errorf("router %s closed the connection", c.router)
			default:
				c.err = remoteError(err)
			}
			c.qc.CloseWithError(quic.ApplicationErrorCode(wire.CodeNone), "done")
			return
		}
		switch m := m.(type) {
		case *wire.Durable:
			if m.Msg.Kind == durable.MsgHeartbeat {
				continue
			}
			c.in <- m.Msg
		case *wire.Error:
			closing = m.Err()
		default:
			c.err = wire.Errorf(wire.CodeUnexpected, "router sent %s on a durable connection", m.Type())
			c.qc.CloseWithError(quic.ApplicationErrorCode(wire.CodeUnexpected), c.err.Error())
			return
		}
	}
}

// readReused reads and decodes the next frame into fr's reused buffer
// with dec (which must not share strings: nothing decoded may keep the
// buffer).
func readReused(fr *wire.FrameReader, dec *wire.EventDecoder) (wire.Message, error) {
	t, body, err := fr.ReadFrameReuse()
	if err != nil {
		return nil, err
	}
	return dec.Decode(t, body)
}

// beatPeriod is how often a durable connection writes a padded heartbeat
// to its router.
const beatPeriod = 250 * time.Millisecond

// beat writes a padded wire.Heartbeat every beatPeriod until the
// connection ends: a router that was killed and restarted answers the
// next one with a stateless reset (QUIC's own keep-alives are too small
// for one), so the client notices the restart within a period, without a
// tight silence allowance that a busy router could trip.
func (c *durableConn) beat() {
	t := time.NewTicker(beatPeriod)
	defer t.Stop()
	hb := wire.AppendFrame(nil, &wire.Heartbeat{Padding: wire.HeartbeatPadding})
	for {
		select {
		case <-c.qc.Context().Done():
			return
		case <-t.C:
		}
		c.wmu.Lock()
		_, err := c.ctrl.Write(hb)
		c.wmu.Unlock()
		if err != nil {
			return
		}
	}
}

// send writes one durable message.
func (c *durableConn) send(m durable.Msg) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.ctrl.Write(wire.AppendFrame(nil, &wire.Durable{Msg: m})); err != nil {
		return remoteError(err)
	}
	return nil
}

// close ends the connection.
func (c *durableConn) close() {
	c.qc.CloseWithError(quic.ApplicationErrorCode(wire.CodeNone), "client closed")
}

// finish ends the control stream after what was written and waits (until
// ctx ends) for the router to close the connection, so that the last
// message is read before the connection goes.
func (c *durableConn) finish(ctx context.Context) {
	c.wmu.Lock()
	c.ctrl.Close()
	c.wmu.Unlock()
	select {
	case <-c.qc.Context().Done():
	case <-ctx.Done():
	}
	c.close()
}

// dialer tries the routers in turn with exponential backoff, and gives up
// once RetryTimeout has passed since the last working connection. The
// round starts after the router last connected to, so the one just lost
// (maybe dead) is tried last; and a router that refuses as not leading a
// replicated pubend names the leader, whose address is tried next when
// the dialer knows it (from an earlier connection's welcome), instead of
// the next in turn, which may be the dead one.
//
// Each attempt's handshake is bounded by DialTimeout at first, and by
// twice the last bound after an attempt at the same address ran out of
// it (up to RetryTimeout), until a connection there works. A router that
// is alive but slow to handshake (a loaded machine, many clients
// reconnecting at once) is then given the time it needs: with a fixed
// bound below its handshake time no attempt would ever succeed, and each
// abandoned attempt would leave the router a handshake to finish for
// nothing, making the next slower still. A dead router costs DialTimeout
// at its first attempt, so failover stays quick.
type dialer struct {
	o       DurableOptions
	next    int
	backoff time.Duration
	since   time.Time                // when the last connection was lost (or the first attempt)
	addrOf  map[string]string        // router name (its welcome) -> the address it answered on
	bound   map[string]time.Duration // address -> its next attempt's handshake bound, once one ran out
}

func newDialer(o DurableOptions) *dialer {
	return &dialer{o: o, backoff: o.MinBackoff, since: time.Now(), addrOf: map[string]string{},
		bound: map[string]time.Duration{}}
}

// attemptTimeout returns the handshake bound of the next attempt at addr.
func (d *dialer) attemptTimeout(addr string) time.Duration {
	if b, ok := d.bound[addr]; ok {
		return b
	}
	return d.o.DialTimeout
}

// timedOut records that an attempt at addr ran out of its bound: the next
// one there gets twice as long, up to RetryTimeout.
func (d *dialer) timedOut(addr string) {
	d.bound[addr] = max(d.o.DialTimeout, min(2*d.attemptTimeout(addr), d.o.RetryTimeout))
}

// follow makes the leader a not-leader refusal names the next router
// tried, if its address is known.
func (d *dialer) follow(err error) {
	var re *RefusedError
	if !errors.As(err, &re) {
		return
	}
	addr, ok := d.addrOf[re.Leader]
	if !re.NotLeader || re.Leader == "" || !ok {
		return
	}
	if i := slices.Index(d.o.Routers, addr); i >= 0 {
		d.next = i
	}
}

// connected records a working connection (after its opening exchange).
func (d *dialer) connected() { d.backoff, d.since = d.o.MinBackoff, time.Time{} }

// lost records the loss of the working connection.
func (d *dialer) lost() {
	if d.since.IsZero() {
		d.since = time.Now()
	}
}

// dial connects to the next router that answers; open runs the opening
// exchange on it (a failure there counts as a failed attempt). It fails
// with ErrUnreachable after RetryTimeout, with ctx's error, or with open's
// error when permanent reports it as one.
func (d *dialer) dial(ctx context.Context, stop <-chan struct{}, open func(*durableConn) error, permanent func(error) bool) (*durableConn, error) {
	d.lost()
	var last error
	for {
		addr := d.o.Routers[d.next%len(d.o.Routers)]
		d.next++
		actx, cancel := context.WithTimeout(ctx, d.attemptTimeout(addr))
		c, err := dialDurable(actx, addr, d.o.Options, d.o.Heartbeat)
		expired := errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		if err != nil && expired && ctx.Err() == nil {
			d.timedOut(addr)
		}
		if err == nil {
			d.addrOf[c.router] = addr
			delete(d.bound, addr)
			if err = open(c); err == nil {
				return c, nil
			}
			c.close()
			if permanent(err) {
				return nil, err
			}
			d.follow(err)
		}
		last = err
		if time.Since(d.since) > d.o.RetryTimeout {
			return nil, fmt.Errorf("%w for %v: %w", ErrUnreachable, d.o.RetryTimeout, last)
		}
		wait := d.backoff/2 + rand.N(d.backoff/2+1)
		d.backoff = min(2*d.backoff, d.o.MaxBackoff)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-stop:
			return nil, ErrClosed
		}
	}
}

// await waits for the first message of c that want accepts, returning
// its error (want returns done=true to stop waiting).
func await(ctx context.Context, c *durableConn, timeout time.Duration, want func(durable.Msg) (done bool, err error)) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case m, ok := <-c.in:
			if !ok {
				return c.err
			}
			if done, err := want(m); done {
				return err
			}
		case <-t.C:
			return fmt.Errorf("router %s did not answer within %v", c.router, timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
