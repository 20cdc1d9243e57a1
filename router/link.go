package router

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/core"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Redial backoff bounds: the delay doubles from minRedial up to maxRedial
// (with jitter), and starts over after a link that stayed up longer than
// maxRedial (a dial that failed, however long it took, never resets it).
const (
	minRedial = 100 * time.Millisecond
	maxRedial = 10 * time.Second
)

// newConn wraps a QUIC connection (accepted or dialled) with its send
// queue, logger and metrics; the caller drops the metrics when done.
func (r *Router) newConn(qc *quic.Conn) *conn {
	id := ifaceID(r.nextIface.Add(1))
	c := &conn{
		id:   id,
		qc:   qc,
		peer: certs.PeerName(qc.ConnectionState().TLS),
		q:    newSendQueue(r.cfg.ControlQueue, r.cfg.SendQueue),
	}
	c.ident, c.identErr = certs.PeerIdentity(qc.ConnectionState().TLS)
	c.log = r.log.With("conn", uint64(id), "peer", c.peer, "remote", qc.RemoteAddr().String())
	c.cm = r.metrics.forConn(strconv.FormatUint(uint64(id), 10), c.peer)
	return c
}

// runLink brings up a link whose peer sent h on the control stream ctrl
// (the accepting side's hello is queued by the loop), then carries the
// link's control messages both ways until it ends, and closes it.
func (r *Router) runLink(ctx context.Context, c *conn, ctrl, data *streamReader, h *wire.LinkHello) error {
	accepted := data == nil
	verdict := make(chan error, 1)
	if !r.send(ctx, loopMsg{in: core.LinkUp{Conn: c.id, Hello: h, SendHello: accepted}, conn: c, linkErr: verdict}) {
		c.fail(wire.CodeShutdown, "router shutting down")
		return errStopped
	}
	if err := <-verdict; err != nil {
		c.log.Warn("link refused", "link", h.Name, "err", err)
		r.failConn(c, err)
		return err
	}
	c.log = c.log.With("link", h.Name)
	defer r.sendDetach(c.id)
	if accepted {
		var err error
		if data, err = r.acceptLinkData(ctx, c); err != nil {
			r.failConn(c, err)
			return err
		}
	}
	c.log.Info("link up")
	r.durableLinkUp(h.Name, c, h.Reach)
	defer r.durableLinkDown(h.Name, c)
	w := &connWriter{q: c.q, maxFrame: r.cfg.MaxFrame, metrics: r.metrics, cm: c.cm}
	stopBeat := make(chan struct{})
	defer close(stopBeat)
	go r.heartbeat(c, stopBeat)
	errc := make(chan error, 4)
	go func() { errc <- w.runControl(ctrl.s) }()
	go func() { errc <- r.linkWriter(w)(data.s) }()
	go func() { errc <- peerDone(r.readLink(ctx, c, ctrl, h.Name)) }()
	go func() { errc <- peerDone(r.readLinkData(ctx, c, data)) }()
	err := r.linkEnded(errc)
	switch {
	case err == nil:
		c.fail(wire.CodeNone, "link closed")
	case isPeerClose(err):
		c.fail(wire.CodeNone, "link closed by peer: "+err.Error())
	default:
		r.failConn(c, err)
	}
	c.log.Info("link down", "err", err)
	return err
}

// heartbeat queues a padded wire.Heartbeat on the link's control lane
// every cfg.Heartbeat until stop is closed. Unlike QUIC keep-alives, its
// packets are large enough that a peer which restarted (same address,
// same stateless reset key) answers with a stateless reset, so the stale
// link ends at once rather than at the idle timeout. A full queue skips a
// beat: the link is busy anyway.
func (r *Router) heartbeat(c *conn, stop <-chan struct{}) {
	t := time.NewTicker(r.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			c.q.pushControl(wire.AppendFrame(nil, &wire.Heartbeat{Padding: wire.HeartbeatPadding}))
		}
	}
}

// errPeerDone ends a link reader whose stream the peer ended cleanly (it
// does so after sending all it had, when it shuts down). The link closes
// once both readers have ended so: closing it when the control stream
// says the peer is shutting down would drop the events still unread on
// the data stream, which the peer has already acknowledged to its
// publishers.
var errPeerDone = fmt.Errorf("peer ended the link's streams: %w", io.EOF)

// peerEndWait bounds how long a link waits for the peer to end its second
// stream once it has ended the first.
const peerEndWait = 30 * time.Second

// linkEnded waits for the first of a link's readers and writers (errc) to
// end it and returns why. A peer that ended one stream cleanly is given
// until it ends the other (or peerEndWait), so that every frame it sent
// is read; this router's own shutdown ends the writers, and then closing
// the connection ends the readers.
func (r *Router) linkEnded(errc <-chan error) error {
	var timeout <-chan time.Time
	for readersDone := 0; ; {
		var err error
		select {
		case err = <-errc:
		case <-timeout:
			return errPeerDone
		}
		switch {
		case errors.Is(err, errPeerDone):
			if readersDone++; readersDone == 2 {
				return err
			}
			timeout = time.After(peerEndWait)
		case errors.Is(err, errStopped), errors.Is(err, errFinished):
		default:
			return err
		}
	}
}

// peerDone maps a reader's clean end of stream to errPeerDone.
func peerDone(err error) error {
	if errors.Is(err, io.EOF) {
		return errPeerDone
	}
	return err
}

// readLink reads a link's control messages and hands them to the loop
// (the mesh refuses the ones that do not belong on a link); durable
// frames go to the durable side instead, heartbeats nowhere.
func (r *Router) readLink(ctx context.Context, c *conn, sr *streamReader, peer string) error {
	for {
		m, err := c.readMessage(sr)
		if err != nil {
			return err
		}
		switch m := m.(type) {
		case *wire.Heartbeat:
			continue
		case *wire.Error:
			if m.Code == wire.CodeShutdown {
				continue // the peer ends both streams after its last frame: read on to the end
			}
		}
		if handled, ok := r.durableLinkFrame(peer, c, m); !ok {
			return errStopped
		} else if handled {
			continue
		}
		if !r.send(ctx, coreMsg(core.LinkFrame{Conn: c.id, Msg: m})) {
			return errStopped
		}
	}
}

// keepLinked dials peer and runs the link, and redials with exponential
// backoff and jitter whenever it fails or ends, until ctx is done. Links
// run under connCtx, which ends after the router's shutdown.
func (r *Router) keepLinked(ctx, connCtx context.Context, peer string) {
	r.redialLoop(ctx, peer, func() (time.Duration, error) { return r.dialLink(ctx, connCtx, peer) }, sleepCtx)
}

// redialLoop calls dial until ctx is done, waiting between calls as the
// backoff says. dial returns how long the link was up (zero when it never
// came up: a dial that ran into the handshake timeout is still a failure).
// wait sleeps for d and reports false when ctx ended first.
func (r *Router) redialLoop(ctx context.Context, peer string, dial func() (time.Duration, error), wait func(context.Context, time.Duration) bool) {
	backoff := minRedial
	for ctx.Err() == nil {
		up, err := dial()
		if ctx.Err() != nil {
			return
		}
		if up > maxRedial {
			backoff = minRedial
		}
		d := backoff/2 + rand.N(backoff/2+1)
		r.log.Info("redialling peer", "addr", peer, "in", d, "after", err)
		if !wait(ctx, d) {
			return
		}
		backoff = min(2*backoff, maxRedial)
	}
}

// sleepCtx sleeps for d; false means ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// dialLink dials peer, opens the link's control stream, sends this
// router's hello, reads the peer's and runs the link until it ends. It
// returns how long the link was up: zero if it never came up.
func (r *Router) dialLink(ctx, connCtx context.Context, peer string) (time.Duration, error) {
	addr, err := net.ResolveUDPAddr("udp", peer)
	if err != nil {
		return 0, fmt.Errorf("peer %s: %w", peer, err)
	}
	hctx, cancel := context.WithTimeout(ctx, r.cfg.HandshakeTimeout)
	defer cancel()
	tlsConf := r.cfg.PeerTLS.Clone()
	if host, _, err := net.SplitHostPort(peer); err == nil && tlsConf.ServerName == "" {
		tlsConf.ServerName = host
	}
	qc, err := r.tr.Dial(hctx, addr, tlsConf, quicConfig(r.cfg))
	if err != nil {
		return 0, fmt.Errorf("dial peer %s: %w", peer, err)
	}
	c := r.newConn(qc)
	defer r.metrics.dropConn(c.cm)
	ctrl, data, h, err := r.openLink(hctx, c)
	switch {
	case err != nil && isPeerClose(err):
		c.log.Warn("link refused", "addr", peer, "err", err)
		c.fail(wire.CodeNone, "refused by peer")
		return 0, fmt.Errorf("peer %s: %w", peer, err)
	case err != nil:
		r.failConn(c, err)
		return 0, fmt.Errorf("peer %s: %w", peer, err)
	}
	began := time.Now()
	err = r.runLink(connCtx, c, ctrl, data, h)
	return time.Since(began), err
}

// openLinkData opens a dialled link's data stream, which carries
// LinkPublish (or BloomPublish) frames both ways, and sends its Attach
// preamble. Both ends read it with wire.LinkSlack above MaxFrame.
func (r *Router) openLinkData(ctx context.Context, c *conn) (*streamReader, error) {
	s, err := c.qc.OpenStreamSync(ctx)
	if err != nil {
		return nil, fmt.Errorf("open link data stream: %w", err)
	}
	if _, err := s.Write(wire.AppendFrame(nil, &wire.Attach{Version: wire.Version})); err != nil {
		return nil, fmt.Errorf("write attach: %w", err)
	}
	return &streamReader{s: s, fr: wire.NewFrameReader(s, r.cfg.MaxFrame+wire.LinkSlack)}, nil
}

// acceptLinkData accepts an accepted link's data stream and reads its
// Attach preamble, within the handshake timeout.
func (r *Router) acceptLinkData(ctx context.Context, c *conn) (*streamReader, error) {
	hctx, cancel := context.WithTimeout(ctx, r.cfg.HandshakeTimeout)
	defer cancel()
	data, first, err := r.acceptStream(hctx, c)
	if err != nil {
		return nil, fmt.Errorf("link data stream: %w", err)
	}
	if a, ok := first.(*wire.Attach); !ok || a.Version != wire.Version {
		return nil, wire.Errorf(wire.CodeUnexpected, "first frame on a link's data stream is %s, want attach version %d", first.Type(), wire.Version)
	}
	data.fr.SetMax(r.cfg.MaxFrame + wire.LinkSlack)
	return data, nil
}

// openLink opens the control stream of a dialled link and sends this
// router's hello, opens the data stream (the peer accepts it before it
// answers), and reads the peer's hello.
func (r *Router) openLink(ctx context.Context, c *conn) (ctrl, data *streamReader, h *wire.LinkHello, err error) {
	s, err := c.qc.OpenStreamSync(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open control stream: %w", err)
	}
	var hello *wire.LinkHello
	if err := r.query(ctx, func(l *matchLoop) { hello = l.core.Hello() }); err != nil {
		return nil, nil, nil, err
	}
	if _, err := s.Write(wire.AppendFrame(nil, hello)); err != nil {
		return nil, nil, nil, fmt.Errorf("write link hello: %w", err)
	}
	ctrl = &streamReader{s: s, fr: wire.NewFrameReader(s, r.cfg.MaxFrame)}
	if data, err = r.openLinkData(ctx, c); err != nil {
		return nil, nil, nil, err
	}
	first, err := readFirst(ctx, ctrl)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("link hello: %w", err)
	}
	h, ok := first.(*wire.LinkHello)
	if !ok {
		return nil, nil, nil, wire.Errorf(wire.CodeUnexpected, "first frame on a link is %s, want link-hello", first.Type())
	}
	if err := checkLinkPeer(c, h); err != nil { // identity.go: the dialled side too
		return nil, nil, nil, err
	}
	return ctrl, data, h, nil
}

// readFirst reads a stream's first message, giving up when ctx ends.
func readFirst(ctx context.Context, sr *streamReader) (wire.Message, error) {
	type result struct {
		m   wire.Message
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := sr.fr.ReadMessage()
		done <- result{m, err}
	}()
	select {
	case res := <-done:
		return res.m, res.err
	case <-ctx.Done():
		sr.s.CancelRead(quic.StreamErrorCode(wire.CodeUnexpected))
		return nil, fmt.Errorf("waiting for the first frame: %w", ctx.Err())
	}
}

// Routes describes the router's links for /debug/routes: per link, the
// peer, the routers behind it and the filters forwarded and received. It
// is empty when the router takes no links.
func (r *Router) Routes(ctx context.Context) ([]mesh.LinkRoutes, error) {
	return r.routes(ctx, false)
}

// RouteCounts is Routes with the filter lists left out (their lengths
// only; see mesh.Mesh.RouteCounts).
func (r *Router) RouteCounts(ctx context.Context) ([]mesh.LinkRoutes, error) {
	return r.routes(ctx, true)
}

func (r *Router) routes(ctx context.Context, counts bool) ([]mesh.LinkRoutes, error) {
	var out []mesh.LinkRoutes
	err := r.query(ctx, func(l *matchLoop) {
		switch {
		case l.mesh == nil:
		case counts:
			out = l.mesh.RouteCounts()
		default:
			out = l.mesh.Routes()
		}
	})
	return out, err
}

// failConn counts err as a protocol error sent and closes c with its code
// and message (once; the reader or writer that ends next sees it). Used
// outside the matching loop; inside it, refuseLink (linkloop.go) also
// detaches.
func (r *Router) failConn(c *conn, err error) {
	r.countError(err)
	c.fail(wire.CodeOf(err), closeReason(err))
}

// newIncarnation picks this router run's incarnation, sent in every link
// hello: peers holding a link to an earlier run see it is stale.
func newIncarnation() uint64 { return rand.Uint64() }
