package router

import (
	"context"
	"crypto/tls"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/certs"
)

// Identity checks: which certificate may do what. TLS already verified
// that the peer's certificate chains to the deployment CA and carries a
// sift identity (router/certs); here the role and name must fit what the
// peer asks for. A refusal closes the connection with CodeForbidden and a
// message naming the certificate, so a misconfigured peer logs why.

// checkLinkPeer admits a link only from a router certificate naming the
// router the link hello names (or Init's development certificate, which
// names any router).
func checkLinkPeer(c *conn, hello *wire.LinkHello) error {
	if c.identErr != nil {
		return wire.Errorf(wire.CodeForbidden, "link from %q refused: %v", hello.Name, c.identErr)
	}
	if c.ident.Role != certs.Node {
		return wire.Errorf(wire.CodeForbidden, "link from %q refused: its certificate is a %s certificate (%s); a link needs a router certificate", hello.Name, c.ident.Role, c.ident)
	}
	if !c.ident.Admits(hello.Name) {
		return wire.Errorf(wire.CodeForbidden, "link from %q refused: its certificate names router %q", hello.Name, c.ident.Name)
	}
	return nil
}

// checkClientPeer admits a client connection only from a client
// certificate, or from this router's own certificate (self; also Init's
// development certificate, which names every router): a part of the
// router's own process, such as siftd's HTTP gateway, which checks its own
// users' permissions.
func checkClientPeer(c *conn, hello *wire.Hello, self string) error {
	if c.identErr != nil {
		return wire.Errorf(wire.CodeForbidden, "client %q refused: %v", hello.Name, c.identErr)
	}
	if c.ident.Admits(self) { // this router's certificate, or Init's for any router
		c.self = true
		return nil
	}
	if c.ident.Role != certs.Client {
		return wire.Errorf(wire.CodeForbidden, "client %q refused: its certificate is a %s certificate (%s); a client connection needs a client certificate", hello.Name, c.ident.Role, c.ident)
	}
	return nil
}

// closeReason is the message a connection closed with err carries: a
// protocol error's own message, without the code name the close already
// carries (the peer's wire.ProtocolError prints it once).
func closeReason(err error) string {
	if pe, ok := err.(*wire.ProtocolError); ok && pe.Msg != "" {
		return pe.Msg
	}
	return err.Error()
}

// Revalidate checks the certificate every open connection (client or
// link) presented against verify, normally the reloaded certificates'
// certs.Store.VerifyPeer, and closes with CodeForbidden those it refuses:
// after a CA rotation, certificates of the old CA are revoked for open
// connections too, while every connection whose certificate still
// verifies stays up. It returns how many it closed.
func (r *Router) Revalidate(ctx context.Context, verify func(tls.ConnectionState) error) (int, error) {
	var conns []*conn
	if err := r.query(ctx, func(l *matchLoop) {
		for _, c := range l.conns {
			conns = append(conns, c)
		}
	}); err != nil {
		return 0, err
	}
	closed := 0
	for _, c := range conns {
		if err := verify(c.qc.ConnectionState().TLS); err != nil {
			closed++
			r.metrics.Errors.WithLabelValues(wire.CodeForbidden.String()).Inc()
			c.fail(wire.CodeForbidden, "certificate no longer accepted after a reload: "+err.Error())
		}
	}
	return closed, nil
}
