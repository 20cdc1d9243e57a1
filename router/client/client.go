package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// ErrClosed is the error of operations on a closed Client and of
// subscriptions ended by Close.
var ErrClosed = errors.New("client closed")

// Client is a connection to one router.
type Client struct {
	opts    Options
	qc      *quic.Conn
	ctrl    *quic.Stream
	ctrlFR  *wire.FrameReader
	data    *quic.Stream
	welcome wire.Welcome

	ctrlMu sync.Mutex // serialises control stream writes

	pub publisher

	mu      sync.Mutex
	subs    subTable              // by id (subscription.go)
	pending map[reqKey]chan error // nil channel: abandoned subscribe
	nextSub atomic.Uint64
	batches atomic.Pointer[[]*Batch] // SubscribeBatch's, by first id (batch.go)

	assist assistant // RTO/FF (assist.go)
	claim  claimer   // claimed placement (claim.go)

	closing  atomic.Pointer[wire.ProtocolError] // connection-level error announced by the router
	ctrlDone chan struct{}                      // closed when readControl returns

	done    chan struct{}
	errOnce sync.Once
	err     error
}

type reqKey struct {
	about wire.Type
	id    uint64
}

// Dial connects to the router at addr (HOST:PORT), runs the Hello exchange
// and opens the data stream.
func Dial(ctx context.Context, addr string, opts Options) (*Client, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	// quic-go gives up a handshake after 5 s by default; the caller's
	// deadline decides instead.
	handshake := time.Duration(0)
	if dl, ok := ctx.Deadline(); ok {
		handshake = time.Until(dl)
	}
	qc, err := quic.DialAddr(ctx, addr, opts.TLS.Clone(), &quic.Config{
		HandshakeIdleTimeout:           handshake,
		MaxIdleTimeout:                 opts.IdleTimeout,
		KeepAlivePeriod:                opts.KeepAlive,
		InitialStreamReceiveWindow:     1 << 20,
		MaxStreamReceiveWindow:         6 << 20,
		InitialConnectionReceiveWindow: 2 << 20,
		MaxConnectionReceiveWindow:     15 << 20,
		MaxIncomingStreams:             -1,
		MaxIncomingUniStreams:          -1,
	})
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	c := &Client{
		opts:     opts,
		qc:       qc,
		pending:  make(map[reqKey]chan error),
		done:     make(chan struct{}),
		ctrlDone: make(chan struct{}),
	}
	if err := c.handshake(ctx); err != nil {
		qc.CloseWithError(quic.ApplicationErrorCode(wire.CodeOf(err)), err.Error())
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	c.pub.init(c)
	go c.readControl()
	go c.readData()
	go c.heartbeat()
	if err := c.offerAssist(); err != nil {
		c.Close()
		return nil, fmt.Errorf("dial %s: assist offer: %w", addr, err)
	}
	return c, nil
}

// handshake sends Hello, reads Welcome and opens the data stream.
func (c *Client) handshake(ctx context.Context) error {
	ctrl, err := c.qc.OpenStreamSync(ctx)
	if err != nil {
		return err
	}
	c.ctrl = ctrl
	c.ctrlFR = wire.NewFrameReader(ctrl, wire.HardMaxFrame)
	hello := &wire.Hello{MinVersion: wire.Version, MaxVersion: c.opts.ProtocolVersion, Role: wire.RoleClient, Name: c.opts.Name}
	if _, err := ctrl.Write(wire.AppendFrame(nil, hello)); err != nil {
		return remoteError(err)
	}
	stop := context.AfterFunc(ctx, func() { ctrl.CancelRead(quic.StreamErrorCode(wire.CodeNone)) })
	m, err := c.ctrlFR.ReadMessage()
	stop()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return remoteError(err)
	}
	w, ok := m.(*wire.Welcome)
	if !ok {
		return wire.Errorf(wire.CodeUnexpected, "router answered hello with %s", m.Type())
	}
	if w.Version < hello.MinVersion || w.Version > hello.MaxVersion {
		return wire.Errorf(wire.CodeVersion, "router chose protocol version %d, outside the %d-%d this client speaks", w.Version, hello.MinVersion, hello.MaxVersion)
	}
	c.welcome = *w
	data, err := c.qc.OpenStreamSync(ctx)
	if err != nil {
		return err
	}
	c.data = data
	if _, err := data.Write(wire.AppendFrame(nil, &wire.Attach{Version: w.Version})); err != nil {
		return remoteError(err)
	}
	return nil
}

// RouterName returns the name the router gave in Welcome.
func (c *Client) RouterName() string { return c.welcome.Name }

// Done is closed when the connection has ended; Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended (ErrClosed after Close), or nil
// while it is up.
func (c *Client) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Close closes the connection. Events published but not flushed may be
// lost; call Flush first.
func (c *Client) Close() error {
	c.fail(ErrClosed)
	c.qc.CloseWithError(quic.ApplicationErrorCode(wire.CodeNone), "client closed")
	return nil
}

// fail ends the connection's life with err, once: it wakes every waiter
// and ends every subscription.
func (c *Client) fail(err error) {
	c.errOnce.Do(func() {
		c.err = err
		close(c.done)
		c.mu.Lock()
		subs := c.subs.drain()
		c.mu.Unlock()
		for _, s := range subs {
			s.end(err)
		}
	})
}

// remoteError turns a QUIC application close from the router into the
// *wire.ProtocolError it carries.
func remoteError(err error) error {
	var ae *quic.ApplicationError
	if errors.As(err, &ae) && ae.Remote {
		return &wire.ProtocolError{Code: wire.Code(ae.ErrorCode), Msg: ae.ErrorMessage}
	}
	return err
}

// writeControl writes one frame on the control stream.
func (c *Client) writeControl(m wire.Message) error {
	c.ctrlMu.Lock()
	defer c.ctrlMu.Unlock()
	if _, err := c.ctrl.Write(wire.AppendFrame(nil, m)); err != nil {
		return remoteError(err)
	}
	return nil
}

// readControl handles acks and errors until the connection ends.
func (c *Client) readControl() {
	defer close(c.ctrlDone)
	fr := c.ctrlFR
	for {
		m, err := fr.ReadMessage()
		if errors.Is(err, io.EOF) && c.closing.Load() != nil {
			return // the data stream ends the connection after its last delivery
		}
		if err != nil {
			c.fail(c.connError(err))
			return
		}
		switch m := m.(type) {
		case *wire.Ack:
			if m.About == wire.TypePublish {
				c.pub.acked(m.ID)
			} else {
				c.answer(reqKey{m.About, m.ID}, nil)
			}
		case *wire.RTOQuery, *wire.FFFixed:
			c.assisted(m)
		case *wire.AdvertAck:
			c.answer(reqKey{m.About, m.ID}, nil) // advert.go
		case *wire.Error:
			if m.About == 0 {
				c.closing.Store(m.Err())
				continue
			}
			c.answer(reqKey{m.About, m.Ref}, m.Err())
		default:
			c.fail(wire.Errorf(wire.CodeUnexpected, "router sent %s on the control stream", m.Type()))
			return
		}
	}
}

// connError prefers the connection's close reason to a stream error.
func (c *Client) connError(err error) error {
	if pe := c.closing.Load(); pe != nil {
		return pe
	}
	if cerr := context.Cause(c.qc.Context()); cerr != nil {
		return remoteError(cerr)
	}
	return remoteError(err)
}

// answer completes a pending subscribe or unsubscribe.
func (c *Client) answer(k reqKey, err error) {
	c.mu.Lock()
	ch, ok := c.pending[k]
	delete(c.pending, k)
	c.mu.Unlock()
	switch {
	case ok && ch != nil:
		ch <- err
	case ok && err == nil && k.about == wire.TypeSubscribe:
		// Abandoned by a cancelled Subscribe but installed: remove it.
		go c.writeControl(&wire.Unsubscribe{ID: k.id})
	}
}

// request registers a pending reply, sends m and waits for the reply
// (a subscribe under Options.NoWaitReady does not wait: see noWait).
func (c *Client) request(ctx context.Context, k reqKey, m wire.Message) error {
	if k.about == wire.TypeSubscribe && c.opts.NoWaitReady {
		return c.noWait(k, m)
	}
	ch := make(chan error, 1)
	c.mu.Lock()
	c.pending[k] = ch
	c.mu.Unlock()
	if err := c.claimFF(m); err != nil { // assist.go: FF claim first
		c.forget(k)
		return err
	}
	if err := c.claimPlace(m); err != nil { // claim.go
		c.forget(k)
		return err
	}
	if err := c.writeControl(m); err != nil {
		c.forget(k)
		return err
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		c.mu.Lock()
		if _, ok := c.pending[k]; ok {
			c.pending[k] = nil
		}
		c.mu.Unlock()
		return ctx.Err()
	case <-c.done:
		return c.err
	}
}

// noWait sends a subscribe and returns; a refusal arriving later ends
// the subscription with the router's error.
func (c *Client) noWait(k reqKey, m wire.Message) error {
	ch := make(chan error, 1)
	c.mu.Lock()
	c.pending[k] = ch
	c.mu.Unlock()
	if err := c.claimFF(m); err != nil {
		c.forget(k)
		return err
	}
	if err := c.claimPlace(m); err != nil {
		c.forget(k)
		return err
	}
	if err := c.writeControl(m); err != nil {
		c.forget(k)
		return err
	}
	go func() {
		select {
		case err := <-ch:
			if err != nil {
				c.mu.Lock()
				s := c.subs.remove(k.id)
				c.mu.Unlock()
				if s != nil {
					s.end(err)
				}
			}
		case <-c.done:
		}
	}()
	return nil
}

func (c *Client) forget(k reqKey) {
	c.mu.Lock()
	delete(c.pending, k)
	c.mu.Unlock()
}

// readData dispatches deliveries to subscriptions until the connection
// ends.
func (c *Client) readData() {
	fr := wire.NewFrameReader(c.data, wire.HardMaxFrame)
	var dec wire.EventDecoder
	callback := c.callback() // borrow.go
	// A borrowed item is valid during the call only: it is handed over at
	// once.
	handBorrowed := func(subs []uint64, e match.Event) { c.hand(subs, e, callback) }
	for {
		t, body, err := fr.ReadFrameReuse() // decoded events copy what they keep
		if err != nil {
			if errors.Is(err, io.EOF) {
				<-c.ctrlDone // the router ends the control stream too, after saying why
			}
			c.fail(c.connError(err))
			c.qc.CloseWithError(quic.ApplicationErrorCode(wire.CodeNone), "client done")
			return
		}
		var m wire.Message
		if t == wire.TypeDeliver && c.opts.OnBorrowedEvent != nil {
			err = dec.DecodeBorrowedDeliver(body, handBorrowed) // body: the reused frame buffer
		} else {
			m, err = dec.Decode(t, body)
		}
		if err == nil && t != wire.TypeDeliver {
			err = wire.Errorf(wire.CodeUnexpected, "router sent %s on the data stream", t)
		}
		if err != nil {
			c.fail(err)
			c.qc.CloseWithError(quic.ApplicationErrorCode(wire.CodeOf(err)), err.Error())
			return
		}
		if m != nil {
			for _, it := range m.(*wire.Deliver).Items {
				c.hand(it.Subs, it.Event, callback)
			}
		}
	}
}

// hand gives e to each subscription of ids still active: to callback if
// set, else to the subscription's channel. It looks each id up as it goes,
// without a lock (subTable.get), so a callback may subscribe and
// unsubscribe: a subscription it ends gets nothing more, also later in
// the same item. (Looking up a whole frame's subscriptions, or an item's,
// under the client's lock first, as before, was dearer: a frame's
// targets, tens of KB, were written and read back, and an item's cost a
// lock and a pointer store per id.)
func (c *Client) hand(ids []uint64, e match.Event, callback func(*Subscription, match.Event)) {
	ids = c.handBatches(ids, e) // batch.go
	for _, id := range ids {
		s := c.subs.get(id)
		switch {
		case s == nil || s.Err() != nil: // unsubscribed meanwhile
		case callback != nil:
			callback(s, e)
		default:
			s.deliver(e, c.done)
		}
	}
}

// ConnectionStats returns the QUIC statistics of the connection (RTT,
// congestion window, bytes and packets sent, received and lost).
func (c *Client) ConnectionStats() quic.ConnectionStats { return c.qc.ConnectionStats() }
