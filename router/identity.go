package router

import (
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
