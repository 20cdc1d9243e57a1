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

// TestCertsReloadRotation rotates r1 to a new CA with SIGHUP, in the two
// steps docs/deploy.md gives, while r1 is linked to r2 and clients are
// subscribed at r1 and r2. Step 1 (new certificate, both CAs trusted):
// the link and the clients stay up and keep receiving, and a client of
// the new CA gets in. Step 2 (only the new CA): the old CA's certificates
// are revoked, the open link and client connection holding them closed
// and new connections with them refused, as a client and as a router. A
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
					t.Fatalf("sub %s: %d of %d events\nr1:\n%s\nr2:\n%s", name, i, k, r1.log(), r2.log())
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

	// Rotation, step 1: r1 presents a certificate of CA2 and trusts both
	// CAs. Nothing is dropped: bob (CA2) publishes at r1 and the
	// subscribers connected before, at r1 and across the r1-r2 link, get
	// his events.
	bundle := filepath.Join(dir, "both.pem")
	b1, _ := os.ReadFile(filepath.Join(ca1.dir, certs.CAFile))
	b2, _ := os.ReadFile(filepath.Join(ca2.dir, certs.CAFile))
	os.WriteFile(bundle, append(b1, b2...), 0o644)
	for _, f := range []string{certs.NodeFile, certs.NodeKeyFile} {
		b, _ := os.ReadFile(filepath.Join(rotated, f))
		os.WriteFile(filepath.Join(r1Dir, f), b, 0o600)
	}
	os.WriteFile(filepath.Join(r1Dir, certs.CAFile), append(b1, b2...), 0o644)
	r1.cmd.Process.Signal(syscall.SIGHUP)
	r1.waitLine(t, ctx, regexp.MustCompile(`msg="certificates reloaded" identity="router r1"`))
	publish(addr1, bob, n)
	expect(n)
	if r1.hasLine(regexp.MustCompile(`msg="link down"`)) || r1.hasLine(regexp.MustCompile(`msg="connection closed".*code=(?:forbidden|unexpected)`)) {
		t.Fatalf("r1 dropped a link or a client on reload:\n%s", r1.log())
	}

	// A client of the old CA that trusts both connects now (the
	// subscriber at r1 has had its events and left).
	aliceBoth := filepath.Join(dir, "alice-both")
	os.MkdirAll(aliceBoth, 0o700)
	for _, f := range []string{certs.ClientFile, certs.ClientKeyFile} {
		b, _ := os.ReadFile(filepath.Join(alice, f))
		os.WriteFile(filepath.Join(aliceBoth, f), b, 0o600)
	}
	os.WriteFile(filepath.Join(aliceBoth, certs.CAFile), append(b1, b2...), 0o644)
	late := startLogProc(t, ctx, "sift sub alice at r1", nil, "sift", "sub", "--router", addr1, "--certs", aliceBoth, "--timeout", "60s", "seq exists")
	late.waitLine(t, ctx, subReady)

	// Step 2: r1 trusts only CA2. The old CA's certificates are revoked:
	// the open link to r2 and alice's open connection are closed, and new
	// connections with them are refused (the rogue trusts both CAs, so the
	// refusal is r1's).
	b, _ := os.ReadFile(filepath.Join(rotated, certs.CAFile))
	os.WriteFile(filepath.Join(r1Dir, certs.CAFile), b, 0o644)
	r1.cmd.Process.Signal(syscall.SIGHUP)
	r1.waitLine(t, ctx, regexp.MustCompile(`msg="closed connections whose certificates the reloaded CA bundle refuses" closed=2`))
	late.waitLine(t, ctx, regexp.MustCompile(`connection to \S+ lost .*forbidden.*certificate no longer accepted after a reload`))
	for down := regexp.MustCompile(`msg="link down".*link=r2`); !r1.hasLine(down); { // logged before or after
		select {
		case <-ctx.Done():
			t.Fatalf("the revoked link never went down:\n%s", r1.log())
		case <-time.After(20 * time.Millisecond):
		}
	}
	for _, c := range []rogue{
		{kind: "client", addr: addr1, name: "alice", pair: certs.Paths{CA: bundle, Cert: clientPaths(alice).Cert, Key: clientPaths(alice).Key}},
		{kind: "link", addr: addr1, name: "r2", pair: certs.Paths{CA: bundle, Cert: nodePaths(r2Dir).Cert, Key: nodePaths(r2Dir).Key}},
	} {
		out := c.run(t)
		t.Logf("revoked %s %s: %s", c.kind, c.name, out)
		expectPrefix(t, "revoked "+c.name, out, "refused", "bad certificate")
	}
	// bob (CA2) still gets in.
	publish(addr1, bob, 2*n)
	r1.waitLine(t, ctx, regexp.MustCompile(`refused a client certificate.*client certificate ..alice...*unknown authority`))
	if err := r1.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("r1: %v\n%s", err, r1.log())
	}
	r2.stop(syscall.SIGTERM)
}
