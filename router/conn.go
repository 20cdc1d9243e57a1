package router

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/core"
)

// conn is one accepted client connection: its QUIC connection, streams,
// send queue and identity. Its goroutines are the control reader (the one
// that ran the handshake), the data reader and the two writer lanes.
type conn struct {
	id   ifaceID
	qc   *quic.Conn
	peer string // certificate common name
	// ident is what the peer's certificate says it is (identErr if it
	// says nothing usable); identity.go checks it against the hello.
	ident    certs.Identity
	identErr error
	// self: the peer presented this router's own certificate (its HTTP
	// gateway); permissions do not apply to it.
	self   bool
	log    *slog.Logger
	q      *sendQueue
	cm     *connMetrics
	closed sync.Once
	// linkIn and linkOut count a router link's events (set by the loop
	// when the link comes up; nil for clients).
	linkIn, linkOut prometheus.Counter
	// staged holds the events the loop is forwarding on this router link
	// in the current step (client deliveries go into Deliver frames
	// instead, deliver.go); only the loop touches it (deliver.go, stage).
	staged []delivery
	// witness: a Bloom link whose ends agreed on
	// wire.VersionBloomWitness, so its BloomPublish entries carry
	// witnesses (set by the loop before the link's readers and writers
	// start).
	witness bool
	// version is a client's protocol version, from the handshake (0 for
	// a router link).
	version uint64
}

// fail closes the connection with a protocol error code and message, once,
// without blocking the caller, and logs why.
func (c *conn) fail(code wire.Code, msg string) {
	c.closed.Do(func() {
		c.q.close()
		if code == wire.CodeNone || code == wire.CodeShutdown {
			c.log.Info("connection closed", "code", code, "reason", msg)
		} else {
			c.log.Warn("connection closed", "code", code, "reason", msg)
		}
		go c.qc.CloseWithError(quic.ApplicationErrorCode(code), msg)
	})
}

// handle runs one accepted connection from handshake to close: a client,
// or a neighbour router when its first control frame is a LinkHello.
func (r *Router) handle(ctx context.Context, qc *quic.Conn) {
	c := r.newConn(qc)
	defer r.metrics.dropConn(c.cm)

	ctrl, data, link, err := r.handshake(ctx, c)
	if err != nil {
		r.countError(err)
		c.fail(wire.CodeOf(err), closeReason(err))
		return
	}
	if link != nil {
		r.runLink(ctx, c, ctrl, nil, link)
		return
	}
	if !r.send(ctx, loopMsg{in: core.Attach{Conn: c.id}, conn: c}) {
		c.fail(wire.CodeShutdown, "router shutting down")
		return
	}
	r.metrics.Connections.Inc()
	c.log.Info("client connected")
	defer func() {
		r.metrics.Connections.Dec()
		r.sendDetach(c.id)
		r.durableDetach(c.id)
	}()
	r.runConn(ctx, c, ctrl, data)
}

// runConn runs the readers and writers of an attached connection until one
// of them ends, then closes the connection with that one's reason.
func (r *Router) runConn(ctx context.Context, c *conn, ctrl, data *streamReader) {
	w := &connWriter{q: c.q, maxFrame: r.cfg.MaxFrame, metrics: r.metrics, cm: c.cm}
	errc := make(chan error, 4)
	go func() { errc <- w.runControl(ctrl.s) }()
	go func() { errc <- w.runData(data.s) }()
	go func() { errc <- r.readData(ctx, c, data) }()
	go func() { errc <- r.readControl(ctx, c, ctrl) }()
	err := <-errc
	for errors.Is(err, errStopped) || errors.Is(err, errFinished) {
		err = <-errc // shutdown: the drain ends the connection
	}
	switch {
	case err == nil:
		c.fail(wire.CodeNone, "closed")
	case isPeerClose(err):
		c.fail(wire.CodeNone, "closed by peer: "+err.Error())
	default:
		r.countError(err)
		c.fail(wire.CodeOf(err), closeReason(err))
	}
	c.q.close()
}

// isPeerClose reports whether err means the peer (or an idle timeout)
// ended the connection, rather than a protocol failure on our side.
func isPeerClose(err error) bool {
	var ae *quic.ApplicationError
	var ie *quic.IdleTimeoutError
	var se *quic.StatelessResetError
	return errors.Is(err, io.EOF) || errors.As(err, &ae) || errors.As(err, &ie) || errors.As(err, &se)
}

// errStopped ends a reader when the router stops taking input.
var errStopped = errors.New("router stopped taking input")

// streamReader is a stream with its frame reader, and the decoder of its
// control messages (readMessage): one per stream, so that the events of
// its durable messages find their attribute names interned from the
// frames before instead of copying them out of every frame.
type streamReader struct {
	s   *quic.Stream
	fr  *wire.FrameReader
	dec wire.EventDecoder
}

// handshake accepts the control stream and reads its first frame. A
// LinkHello ends the handshake there (the link is returned). A Hello is
// negotiated and answered with Welcome, then the data stream is accepted
// and its Attach read, all within the handshake timeout.
func (r *Router) handshake(ctx context.Context, c *conn) (ctrl, data *streamReader, link *wire.LinkHello, err error) {
	hctx, cancel := context.WithTimeout(ctx, r.cfg.HandshakeTimeout)
	defer cancel()
	ctrl, first, err := r.acceptStream(hctx, c)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("control stream: %w", err)
	}
	if lh, ok := first.(*wire.LinkHello); ok {
		if err := checkLinkPeer(c, lh); err != nil { // identity.go
			return nil, nil, nil, err
		}
		return ctrl, nil, lh, nil
	}
	hello, ok := first.(*wire.Hello)
	if !ok {
		return nil, nil, nil, wire.Errorf(wire.CodeUnexpected, "first control frame is %s, want hello or link-hello", first.Type())
	}
	if hello.Role != wire.RoleClient {
		return nil, nil, nil, wire.Errorf(wire.CodeUnexpected, "peer %q says it is a %s: routers link with a link-hello", hello.Name, hello.Role)
	}
	if err := checkClientPeer(c, hello, r.cfg.Name); err != nil { // identity.go
		return nil, nil, nil, err
	}
	v, err := wire.Negotiate(hello, wire.Version, r.cfg.ClientVersion)
	if err != nil {
		return nil, nil, nil, err
	}
	c.version = v
	welcome := &wire.Welcome{Version: v, Name: r.cfg.Name, MaxFrame: uint64(r.cfg.MaxFrame), MaxSubscriptions: uint64(r.cfg.MaxSubscriptionsPerConn)}
	if _, err := ctrl.s.Write(wire.AppendFrame(nil, welcome)); err != nil {
		return nil, nil, nil, fmt.Errorf("write welcome: %w", err)
	}
	data, first, err = r.acceptStream(hctx, c)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("data stream: %w", err)
	}
	if a, ok := first.(*wire.Attach); !ok || a.Version != v {
		return nil, nil, nil, wire.Errorf(wire.CodeUnexpected, "first data frame is %s, want attach version %d", first.Type(), v)
	}
	c.log = c.log.With("client", hello.Name)
	return ctrl, data, nil, nil
}

// acceptStream accepts the next stream and reads its first message.
func (r *Router) acceptStream(ctx context.Context, c *conn) (*streamReader, wire.Message, error) {
	s, err := c.qc.AcceptStream(ctx)
	if err != nil {
		return nil, nil, err
	}
	sr := &streamReader{s: s, fr: wire.NewFrameReader(s, r.cfg.MaxFrame)}
	m, err := readFirst(ctx, sr)
	if err != nil {
		return nil, nil, err
	}
	return sr, m, nil
}

// readFrame reads one frame from a stream of c and counts it.
func (c *conn) readFrame(sr *streamReader) (wire.Type, []byte, error) {
	t, body, err := sr.fr.ReadFrame()
	if err != nil {
		return 0, nil, err
	}
	c.cm.framesIn.Inc()
	c.cm.bytesIn.Add(float64(len(body) + wire.HeaderLen + 1))
	return t, body, nil
}

// readMessage reads, counts and decodes one frame from a stream of c. The
// body is the message's to keep (a replica frame's data points into it);
// the stream's decoder shares nothing else with it.
func (c *conn) readMessage(sr *streamReader) (wire.Message, error) {
	t, body, err := c.readFrame(sr)
	if err != nil {
		return nil, err
	}
	return sr.dec.Decode(t, body)
}

// readControl reads Subscribe and Unsubscribe frames and hands them to the
// matching loop; anything else is a protocol error.
func (r *Router) readControl(ctx context.Context, c *conn, sr *streamReader) error {
	for {
		m, err := c.readMessage(sr)
		if err != nil {
			return err
		}
		if refused, err := r.permitControl(c, m); err != nil { // permissions.go
			return err
		} else if refused {
			continue
		}
		var msg loopMsg
		switch m := m.(type) {
		case *wire.Subscribe:
			msg = coreMsg(core.Subscribe{Conn: c.id, Sub: m.ID, Filter: m.Filter})
		case *wire.Unsubscribe:
			msg = coreMsg(core.Unsubscribe{Conn: c.id, Sub: m.ID})
		case *wire.SubscribeBatch:
			b := parseBatch(m) // subbatch.go
			if r.permitBatch(c, b) {
				continue // refused whole: not covered by the client's subscribe filter
			}
			msg = coreMsg(b.input(c.id))
		case *wire.Durable:
			if err := r.durableFromClient(c, m); err != nil {
				return err
			}
			continue
		case *wire.Heartbeat:
			continue // it only keeps a restart of this router noticeable
		case *wire.Advertise, *wire.Unadvertise:
			if err := r.advertFromClient(ctx, c, m); err != nil { // advert.go
				return err
			}
			continue
		case *wire.PlaceClaim:
			if c.version < wire.VersionClaim {
				return wire.Errorf(wire.CodeUnexpected, "%s frame from a version %d client", m.Type(), c.version)
			}
			if err := r.assistFromClient(ctx, c, m); err != nil { // rto.go
				return err
			}
			continue
		case *wire.AssistOffer, *wire.RTOAnswer, *wire.FFClaim:
			if err := r.assistFromClient(ctx, c, m); err != nil { // rto.go
				return err
			}
			continue
		default:
			return wire.Errorf(wire.CodeUnexpected, "%s frame on the control stream", m.Type())
		}
		if !r.send(ctx, msg) {
			return errStopped
		}
	}
}

// readData reads a client's Publish frames (and, from client version
// wire.VersionPublishDict on, PublishDict frames, from wire.VersionCompact
// on, PublishCompact frames) and hands each batch to
// the matching loop, stamped with the time it was read, decoded keeping
// only the attributes the loop's filters name (wanted.go).
func (r *Router) readData(ctx context.Context, c *conn, sr *streamReader) error {
	if c.version < wire.VersionPublishDict {
		return r.readEvents(ctx, c, sr, eventFrames{t: wire.TypePublish}, func(dec *wire.EventDecoder, _ wire.Type, body []byte) (core.Publish, error) {
			m, err := dec.DecodeOwnedPublish(body) // body is ours: ReadFrame allocated it
			return r.permitted(c, m, err)
		})
	}
	max := r.cfg.MaxFrame - 1 // a plain Publish frame's type byte and body
	frames := eventFrames{t: wire.TypePublishDict, alt: wire.TypePublish}
	if c.version >= wire.VersionCompact {
		frames.alt2 = wire.TypePublishCompact
	}
	return r.readEvents(ctx, c, sr, frames, func(dec *wire.EventDecoder, t wire.Type, body []byte) (core.Publish, error) {
		var m *wire.Publish
		var err error
		switch t {
		case wire.TypePublish:
			m, err = dec.DecodeOwnedPublish(body)
		case wire.TypePublishCompact:
			m, err = dec.DecodeOwnedPublishCompact(body, max) // its events alias body too
		default:
			m, err = dec.DecodeOwnedPublishDict(body, max)
		}
		return r.permitted(c, m, err)
	})
}

// permitted checks a decoded batch against c's permissions.
func (r *Router) permitted(c *conn, m *wire.Publish, err error) (core.Publish, error) {
	if err == nil {
		err = r.permitPublish(c, m) // permissions.go
	}
	return core.Publish{Pub: m}, err
}

// eventFrames says which frames a data stream carries: type t, or alt or
// alt2 if not 0.
type eventFrames struct{ t, alt, alt2 wire.Type }

func (f eventFrames) accepts(t wire.Type) bool {
	return t == f.t || (f.alt != 0 && t == f.alt) || (f.alt2 != 0 && t == f.alt2)
}

// readEvents reads the frames f names from a data stream, decodes each
// with decode (which fills Pub, and Witness for a link) and hands the
// batch to the matching loop as the core's Publish, stamped with the time
// it was read and the version of the wanted names it was decoded with.
func (r *Router) readEvents(ctx context.Context, c *conn, sr *streamReader, f eventFrames,
	decode func(*wire.EventDecoder, wire.Type, []byte) (core.Publish, error)) error {
	var dec wire.EventDecoder // events live until routed: they alias the frame
	for {
		got, body, err := c.readFrame(sr)
		if err != nil {
			return err
		}
		at := time.Now()
		if !f.accepts(got) {
			if !got.Known() {
				return wire.Errorf(wire.CodeUnknownType, "unknown frame type %d", byte(got))
			}
			return wire.Errorf(wire.CodeUnexpected, "%s frame on the data stream", got)
		}
		var ver uint64
		dec.Wanted, ver = r.loop.want.load() // wanted.go
		in, err := decode(&dec, got, body)
		if err != nil {
			return err
		}
		in.Conn = c.id
		if !r.send(ctx, loopMsg{in: in, at: at, wantVer: ver}) {
			return errStopped
		}
	}
}

// countError counts a protocol error we are about to send, by code.
func (r *Router) countError(err error) {
	r.metrics.Errors.WithLabelValues(wire.CodeOf(err).String()).Inc()
}
