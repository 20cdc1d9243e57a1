package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/router/certs"
)

// TestCertsReloadRotation rotates r1 to a new CA with SIGHUP while r1 is
// linked to r2 and a client is subscribed at r1: the link and the client
// stay up and keep receiving, a client of the new CA gets in, and the old
// CA's certificates are refused for new connections from then on (a
// certificate revoked by rotation), both as a client and as a router. A
// reload with a broken key file keeps the certificates in use.
func TestCertsReloadRotation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	ca1 := newPKI(t, ctx, filepath.Join(dir, "ca1"))
	ca2 := newPKI(t, ctx, filepath.Join(dir, "ca2"))
	r1Dir := ca1.issue("router", "r1", filepath.Join(dir, "r1"))
	r2Dir := ca1.issue("router", "r2", filepath.Join(dir, "r2"))
	alice := ca1.issue("client", "alice", filepath.Join(dir, "alice"))
	bob := ca2.issue("client", "bob", filepath.Join(dir, "bob"))
	rotated := ca2.issue("router", "r1", filepath.Join(dir, "r1-rotated"))

	r1, addr1 := startRouter(t, ctx, dir, "r1", r1Dir)
	r2, addr2 := startRouter(t, ctx, dir, "r2", r2Dir, "--peer", addr1)
	r1.waitLine(t, ctx, regexp.MustCompile(`msg="link up".* link=r2`))

	const n = 20
	lines := map[string]chan string{}
	subAt := func(name, addr string) {
		ch := make(chan string, 2*n)
		lines[name] = ch
		p := startLogProc(t, ctx, "sift sub "+name, func(l string) { ch <- l }, "sift", "sub", "--router", addr, "--certs", alice,
			"--count", fmt.Sprint(2*n), "--timeout", "60s", "seq exists")
		p.waitLine(t, ctx, subReady)
	}
	subAt("at-r1", addr1)
	subAt("at-r2", addr2)
	publish := func(addr, certDir string, from int) {
		t.Helper()
		var b strings.Builder
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&b, "{\"seq\":%d}\n", i)
		}
		if out, err := runBin(t, ctx, strings.NewReader(b.String()), "sift", "pub", "--router", addr, "--certs", certDir); err != nil {
			t.Fatalf("pub at %s with %s: %v\n%s", addr, certDir, err, out)
		}
	}
	expect := func(k int) {
		t.Helper()
		for name, ch := range lines {
			for i := range k {
				select {
				case <-ch:
				case <-ctx.Done():
					t.Fatalf("sub %s: %d of %d events", name, i, k)
				}
			}
		}
	}
	publish(addr1, alice, 0)
	expect(n)

	// A broken key: the reload is refused, the old certificate stays.
	key := filepath.Join(r1Dir, certs.NodeKeyFile)
	good, _ := os.ReadFile(key)
	os.WriteFile(key, []byte("not a key"), 0o600)
	r1.cmd.Process.Signal(syscall.SIGHUP)
	r1.waitLine(t, ctx, regexp.MustCompile(`msg="reload failed: certificates kept"`))
	os.WriteFile(key, good, 0o600)

	// Rotate: r1 presents a certificate of CA2 and trusts only CA2.
	for _, f := range []string{certs.CAFile, certs.NodeFile, certs.NodeKeyFile} {
		b, _ := os.ReadFile(filepath.Join(rotated, f))
		os.WriteFile(filepath.Join(r1Dir, f), b, 0o600)
	}
	r1.cmd.Process.Signal(syscall.SIGHUP)
	r1.waitLine(t, ctx, regexp.MustCompile(`msg="certificates reloaded" identity="router r1"`))

	// bob (CA2) publishes at r1: the subscribers connected before the
	// rotation, at r1 and across the r1-r2 link, get his events.
	publish(addr1, bob, n)
	expect(n)
	if r1.hasLine(regexp.MustCompile(`msg="link down"`)) || r1.hasLine(regexp.MustCompile(`msg="connection closed".*code=(?:forbidden|unexpected)`)) {
		t.Fatalf("r1 dropped a link or a client on reload:\n%s", r1.log())
	}
	// The old CA's certificates are revoked for new connections. The rogue
	// trusts both CAs, so the refusal is r1's.
	bundle := filepath.Join(dir, "both.pem")
	b1, _ := os.ReadFile(filepath.Join(ca1.dir, certs.CAFile))
	b2, _ := os.ReadFile(filepath.Join(ca2.dir, certs.CAFile))
	os.WriteFile(bundle, append(b1, b2...), 0o644)
	for _, c := range []rogue{
		{kind: "client", addr: addr1, name: "alice", pair: certs.Paths{CA: bundle, Cert: clientPaths(alice).Cert, Key: clientPaths(alice).Key}},
		{kind: "link", addr: addr1, name: "r2", pair: certs.Paths{CA: bundle, Cert: nodePaths(r2Dir).Cert, Key: nodePaths(r2Dir).Key}},
	} {
		out := c.run(t)
		t.Logf("revoked %s %s: %s", c.kind, c.name, out)
		expectPrefix(t, "revoked "+c.name, out, "refused", "bad certificate")
	}
	r1.waitLine(t, ctx, regexp.MustCompile(`refused a client certificate.*client certificate ..alice...*unknown authority`))
	if err := r1.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("r1: %v\n%s", err, r1.log())
	}
	r2.stop(syscall.SIGTERM)
}
