package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/certs"
)

// A rogue is a hostile peer run as its own process: the test binary
// re-executed with SIFTD_TEST_ROGUE set. It presents whatever certificate
// it is given (none at all, a client's as a router, another CA's), sends
// a link hello or a client hello under any name, and prints on stdout
// "accepted" or "refused: WHY". siftd itself would refuse to start with
// such certificates, so the rogue uses QUIC and the wire format directly.
const rogueEnv = "SIFTD_TEST_ROGUE"

// rogue describes one hostile connection attempt.
type rogue struct {
	kind string // "link" or "client"
	addr string
	name string      // the name in the hello
	pair certs.Paths // Cert and Key empty: no certificate
}

// run starts the rogue process and returns what it printed.
func (r rogue) run(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), rogueEnv+"="+r.kind, "ROGUE_ADDR="+r.addr, "ROGUE_NAME="+r.name,
		"ROGUE_CA="+r.pair.CA, "ROGUE_CERT="+r.pair.Cert, "ROGUE_KEY="+r.pair.Key)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rogue %s %q: %v\n%s", r.kind, r.name, err, out)
	}
	return strings.TrimSpace(string(out))
}

// rogueMain is the rogue process: it never fails, it reports.
func rogueMain() int {
	fmt.Println(rogueAttempt(os.Getenv(rogueEnv), os.Getenv("ROGUE_ADDR"), os.Getenv("ROGUE_NAME"),
		certs.Paths{CA: os.Getenv("ROGUE_CA"), Cert: os.Getenv("ROGUE_CERT"), Key: os.Getenv("ROGUE_KEY")}))
	return 0
}

func rogueAttempt(kind, addr, name string, p certs.Paths) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	caPEM, err := os.ReadFile(p.CA)
	if err != nil {
		return "setup: " + err.Error()
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	conf := &tls.Config{MinVersion: tls.VersionTLS13, NextProtos: []string{certs.ALPN}, RootCAs: pool, ServerName: "localhost"}
	if p.Cert != "" {
		pair, err := tls.LoadX509KeyPair(p.Cert, p.Key)
		if err != nil {
			return "setup: " + err.Error()
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	qc, err := quic.DialAddr(ctx, addr, conf, &quic.Config{HandshakeIdleTimeout: 5 * time.Second})
	if err != nil {
		return "refused: dial: " + err.Error()
	}
	defer qc.CloseWithError(0, "rogue done")
	s, err := qc.OpenStreamSync(ctx)
	if err != nil {
		return "refused: open stream: " + describe(err)
	}
	var hello wire.Message = &wire.Hello{MinVersion: wire.Version, MaxVersion: wire.Version, Role: wire.RoleClient, Name: name}
	if kind == "link" {
		hello = &wire.LinkHello{MinVersion: wire.Version, MaxVersion: wire.Version, Name: name, Reach: []string{name}, Incarnation: 42}
	}
	if _, err := s.Write(wire.AppendFrame(nil, hello)); err != nil {
		return "refused: write hello: " + describe(err)
	}
	if kind == "link" { // the accepting router waits for the data stream too
		if d, err := qc.OpenStreamSync(ctx); err == nil {
			d.Write(wire.AppendFrame(nil, &wire.Attach{Version: wire.Version}))
		}
	}
	m, err := wire.NewFrameReader(s, wire.HardMaxFrame).ReadMessage()
	if err != nil {
		return "refused: " + describe(err)
	}
	switch m.(type) {
	case *wire.LinkHello, *wire.Welcome:
		return "accepted: " + m.Type().String()
	}
	return "refused: answered with " + m.Type().String()
}

// describe renders a connection error with the router's code and reason.
func describe(err error) string {
	var ae *quic.ApplicationError
	if errors.As(err, &ae) && ae.Remote {
		return fmt.Sprintf("code=%s %s", wire.Code(ae.ErrorCode), ae.ErrorMessage)
	}
	return err.Error()
}
