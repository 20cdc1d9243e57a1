package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/router/certs"
)

// TestHTTPTLSReload: siftd --http-tls serves the router's certificates as
// SIGHUP reloads them, like the router's own listener. r1 starts with a
// certificate of CA1; alice (CA1) holds an SSE stream open. Step 1 of a
// rotation (r1 gets a CA2 certificate and trusts both CAs; SIGHUP): new
// HTTPS connections are served the new certificate, alice's stream stays
// and receives what bob (CA2) publishes. Step 2 (r1 trusts only CA2;
// SIGHUP): alice's open connections are closed and a new one with her
// certificate refused; bob still publishes and subscribes (the gateway
// dials its router again with the reloaded router certificate: its
// connections made with the old one were revoked too, which ends the
// plain streams open through them).
func TestHTTPTLSReload(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	ca1 := newPKI(t, ctx, filepath.Join(dir, "ca1"))
	ca2 := newPKI(t, ctx, filepath.Join(dir, "ca2"))
	r1Dir := ca1.issue("router", "r1", filepath.Join(dir, "r1"))
	alice := ca1.issue("client", "alice", filepath.Join(dir, "alice"))
	bob := ca2.issue("client", "bob", filepath.Join(dir, "bob"))
	rotated := ca2.issue("router", "r1", filepath.Join(dir, "r1-rotated"))
	b1, _ := os.ReadFile(filepath.Join(ca1.dir, certs.CAFile))
	b2, _ := os.ReadFile(filepath.Join(ca2.dir, certs.CAFile))
	both := append(append([]byte(nil), b1...), b2...)

	r1 := startLogProc(t, ctx, "siftd r1", nil, "siftd", "--name", "r1", "--listen", "127.0.0.1:0", "--certs", r1Dir,
		"--data", filepath.Join(dir, "data"), "--http", "127.0.0.1:0", "--http-tls")
	addr := r1.waitLine(t, ctx, httpReadyRE)[1]
	r1.waitLine(t, ctx, readyRE)
	base := "https://" + addr

	// clientOf returns an HTTPS client with the certificate in dir,
	// trusting caPEM, on a connection of its own.
	clientOf := func(dir string, caPEM []byte) *http.Client {
		t.Helper()
		cl, err := certs.LoadPaths(certs.FolderPaths(dir, certs.Client), certs.Client)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPEM)
		tc := &tls.Config{Certificates: []tls.Certificate{cl.Cert}, RootCAs: pool, ServerName: "localhost", NextProtos: []string{"h2"}}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true}}
	}
	// served returns the serial number of the certificate a new HTTPS
	// connection with the client certificate in dir is served.
	served := func(dir string) string {
		t.Helper()
		res, err := clientOf(dir, both).Get(base + "/v1/status")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.TLS.PeerCertificates[0].SerialNumber.Text(16)
	}
	serialOf := func(dir string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, certs.NodeFile))
		if err != nil {
			t.Fatal(err)
		}
		blk, _ := pem.Decode(b)
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c.SerialNumber.Text(16)
	}
	if got, want := served(alice), serialOf(r1Dir); got != want {
		t.Fatalf("served certificate %s, want r1's %s", got, want)
	}
	filter := "/v1/subscribe?filter=" + url.QueryEscape("seq exists")
	aliceEvents, stopAlice := sse(t, ctx, clientOf(alice, b1), base+filter, nil)
	defer stopAlice()
	expect := func(ch <-chan string, seq string) {
		t.Helper()
		select {
		case m, ok := <-ch:
			if !ok || !strings.Contains(m, `"seq":`+seq) {
				t.Fatalf("stream: got %q (open %v), want seq %s", m, ok, seq)
			}
		case <-ctx.Done():
			t.Fatalf("stream: no seq %s", seq)
		}
	}
	if got := postEvents(t, clientOf(alice, b1), base+"/v1/publish", `{"seq":1}`); !strings.Contains(got, `"accepted":1`) {
		t.Fatalf("alice publish: %s", got)
	}
	expect(aliceEvents, "1")

	// Step 1: a CA2 certificate, both CAs trusted.
	for _, f := range []string{certs.NodeFile, certs.NodeKeyFile} {
		b, _ := os.ReadFile(filepath.Join(rotated, f))
		os.WriteFile(filepath.Join(r1Dir, f), b, 0o600)
	}
	os.WriteFile(filepath.Join(r1Dir, certs.CAFile), both, 0o644)
	r1.cmd.Process.Signal(syscall.SIGHUP)
	r1.waitLine(t, ctx, regexp.MustCompile(`msg="certificates reloaded" identity="router r1"`))
	if got, want := served(bob), serialOf(rotated); got != want {
		t.Fatalf("after step 1: served certificate %s, want the rotated %s", got, want)
	}
	if got := postEvents(t, clientOf(bob, both), base+"/v1/publish", `{"seq":2}`); !strings.Contains(got, `"accepted":1`) {
		t.Fatalf("bob publish after step 1: %s", got)
	}
	expect(aliceEvents, "2")

	// Step 2: only CA2. alice's certificate is revoked.
	os.WriteFile(filepath.Join(r1Dir, certs.CAFile), b2, 0o644)
	r1.cmd.Process.Signal(syscall.SIGHUP)
	r1.waitLine(t, ctx, regexp.MustCompile(`msg="closed HTTP connections whose certificates the reloaded CA bundle refuses" closed=[1-9]`)) // alice's stream and her idle keep-alive connections
	// The stream ends: closed with her connection, or first told that the
	// gateway's own connection to the router (made with r1's old
	// certificate, revoked as well) ended; then closed.
	for open := true; open; {
		select {
		case m, ok := <-aliceEvents:
			if ok && !strings.HasPrefix(m, "|end|") {
				t.Fatalf("alice's revoked stream still delivers %q", m)
			}
			if ok {
				t.Logf("alice's stream: %s", m)
			}
			open = ok
		case <-ctx.Done():
			t.Fatal("alice's revoked stream stayed open")
		}
	}
	if res, err := clientOf(alice, both).Get(base + "/v1/status"); err == nil {
		res.Body.Close()
		t.Fatalf("alice after revocation: %d, want a refused handshake", res.StatusCode)
	} else {
		t.Logf("alice after revocation: %v", err)
	}
	r1.waitLine(t, ctx, regexp.MustCompile(`http: refused a client certificate.*unknown authority`))
	bobEvents, stopBob := sse(t, ctx, clientOf(bob, b2), base+filter, nil)
	defer stopBob()
	if got := postEvents(t, clientOf(bob, b2), base+"/v1/publish", `{"seq":3}`); !strings.Contains(got, `"accepted":1`) {
		t.Fatalf("bob publish after step 2: %s", got)
	}
	expect(bobEvents, "3")
	if err := r1.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("r1: %v\n%s", err, r1.log())
	}
}
