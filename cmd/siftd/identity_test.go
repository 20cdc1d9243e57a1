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

// pki is a test deployment's CA folder and the folders issued from it.
type pki struct {
	t   *testing.T
	ctx context.Context
	dir string // the CA: ca.pem, ca-key.pem
}

// newPKI writes a CA-only folder with sift certs init --ca-only.
func newPKI(t *testing.T, ctx context.Context, dir string) *pki {
	t.Helper()
	if out, err := runBin(t, ctx, nil, "sift", "certs", "init", "--ca-only", dir); err != nil {
		t.Fatalf("certs init --ca-only: %v\n%s", err, out)
	}
	return &pki{t, ctx, dir}
}

// issue runs sift certs issue --ca DIR --ROLE NAME --out OUT and returns OUT.
func (p *pki) issue(role, name, out string) string {
	p.t.Helper()
	if got, err := runBin(p.t, p.ctx, nil, "sift", "certs", "issue", "--ca", p.dir, "--"+role, name, "--out", out); err != nil {
		p.t.Fatalf("certs issue --%s %s: %v\n%s", role, name, err, got)
	}
	return out
}

// nodePaths and clientPaths are the certificate paths of an issued folder.
func nodePaths(dir string) certs.Paths   { return certs.FolderPaths(dir, certs.Node) }
func clientPaths(dir string) certs.Paths { return certs.FolderPaths(dir, certs.Client) }

// startRouter runs siftd NAME with the certificates in certDir and
// returns it once ready, with its address.
func startRouter(t *testing.T, ctx context.Context, dir, name, certDir string, extra ...string) (*logProc, string) {
	t.Helper()
	args := append([]string{"--name", name, "--listen", "127.0.0.1:0", "--certs", certDir, "--data", filepath.Join(dir, "data-"+name)}, extra...)
	p := startLogProc(t, ctx, "siftd "+name, nil, "siftd", args...)
	return p, p.waitLine(t, ctx, readyRE)[1]
}

func expectPrefix(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s: got %q, want it to contain %q", what, got, w)
		}
	}
}

// TestIdentityHostile runs two linked routers with their own issued
// certificates and tries every hostile identity against them from other
// processes: a client certificate used as a router, a router certificate
// under another router's name (the real one's link must stay up), a
// certificate of another CA, no certificate, a router certificate used as
// a client, and siftd started under a name its certificate does not
// carry. Each is refused with a reason; the mesh keeps routing throughout.
func TestIdentityHostile(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	ca := newPKI(t, ctx, filepath.Join(dir, "ca"))
	r1Dir := ca.issue("router", "r1", filepath.Join(dir, "r1"))
	r2Dir := ca.issue("router", "r2", filepath.Join(dir, "r2"))
	r3Dir := ca.issue("router", "r3", filepath.Join(dir, "r3"))
	alice := ca.issue("client", "alice", filepath.Join(dir, "alice"))
	other := newPKI(t, ctx, filepath.Join(dir, "other-ca"))
	foreignR2 := other.issue("router", "r2", filepath.Join(dir, "foreign-r2"))
	foreignClient := other.issue("client", "alice", filepath.Join(dir, "foreign-alice"))
	caPEM := filepath.Join(ca.dir, certs.CAFile)
	withCA := func(p certs.Paths) certs.Paths { p.CA = caPEM; return p } // trusts the real CA, presents p's certificate

	// siftd refuses a --name its certificate does not carry.
	if out, err := runBin(t, ctx, nil, "siftd", "--name", "r2", "--listen", "127.0.0.1:0", "--certs", r3Dir, "--data", filepath.Join(dir, "x")); err == nil ||
		!strings.Contains(out, `--name r2 differs from the router name "r3"`) {
		t.Fatalf("siftd --name r2 with r3's certificate: %v\n%s", err, out)
	}
	// A client certificate cannot be loaded as a router's.
	if out, err := runBin(t, ctx, nil, "siftd", "--name", "alice", "--listen", "127.0.0.1:0", "--tls-cert", clientPaths(alice).Cert,
		"--tls-key", clientPaths(alice).Key, "--tls-ca", caPEM, "--data", filepath.Join(dir, "x")); err == nil ||
		!strings.Contains(out, "is a client certificate, want a router certificate") {
		t.Fatalf("siftd with a client certificate: %v\n%s", err, out)
	}

	r1, addr1 := startRouter(t, ctx, dir, "r1", r1Dir)
	// r2 reads its certificate from explicit paths (cert-manager's names).
	tlsDir := filepath.Join(dir, "r2-tls")
	os.MkdirAll(tlsDir, 0o700)
	for from, to := range map[string]string{certs.NodeFile: "tls.crt", certs.NodeKeyFile: "tls.key", certs.CAFile: "ca.crt"} {
		b, _ := os.ReadFile(filepath.Join(r2Dir, from))
		os.WriteFile(filepath.Join(tlsDir, to), b, 0o600)
	}
	r2 := startLogProc(t, ctx, "siftd r2", nil, "siftd", "--name", "r2", "--listen", "127.0.0.1:0",
		"--tls-cert", filepath.Join(tlsDir, "tls.crt"), "--tls-key", filepath.Join(tlsDir, "tls.key"), "--tls-ca", filepath.Join(tlsDir, "ca.crt"),
		"--data", filepath.Join(dir, "data-r2"), "--peer", addr1)
	addr2 := r2.waitLine(t, ctx, readyRE)[1]
	r1.waitLine(t, ctx, regexp.MustCompile(`msg="link up".* link=r2`))
	r2.waitLine(t, ctx, regexp.MustCompile(`msg="link up".* link=r1`))
	_ = addr2

	const n = 50
	var got []string
	gotc := make(chan string, n)
	sub := startLogProc(t, ctx, "sift sub at r2", func(l string) { gotc <- l }, "sift", "sub", "--router", addr2, "--certs", alice,
		"--count", fmt.Sprint(n), "--timeout", "60s", "seq exists")
	sub.waitLine(t, ctx, subReady)

	cases := []struct {
		name string
		r    rogue
		want []string // in the rogue's report
		log  string   // in r1's log
	}{
		{"client certificate as a router", rogue{kind: "link", addr: addr1, name: "r3", pair: clientPaths(alice)},
			[]string{"refused", "code=forbidden", `link from "r3" refused: its certificate is a client certificate`}, `link from ..r3.. refused: its certificate is a client certificate`},
		{"router certificate of another name", rogue{kind: "link", addr: addr1, name: "r2", pair: nodePaths(r3Dir)},
			[]string{"refused", "code=forbidden", `link from "r2" refused: its certificate names router "r3"`}, `link from ..r2.. refused: its certificate names router ..r3..`},
		{"router certificate of another CA", rogue{kind: "link", addr: addr1, name: "r2", pair: withCA(nodePaths(foreignR2))},
			[]string{"refused", "bad certificate"}, `refused a client certificate.*client certificate ..r2...*unknown authority`},
		{"client certificate of another CA", rogue{kind: "client", addr: addr1, name: "alice", pair: withCA(clientPaths(foreignClient))},
			[]string{"refused", "bad certificate"}, `refused a client certificate.*client certificate ..alice...*unknown authority`},
		{"no certificate, as a router", rogue{kind: "link", addr: addr1, name: "r2", pair: certs.Paths{CA: caPEM}},
			[]string{"refused", "certificate required"}, ``},
		{"no certificate, as a client", rogue{kind: "client", addr: addr1, name: "x", pair: certs.Paths{CA: caPEM}},
			[]string{"refused", "certificate required"}, ``},
		{"router certificate as a client", rogue{kind: "client", addr: addr1, name: "r3", pair: nodePaths(r3Dir)},
			[]string{"refused", "code=forbidden", `client "r3" refused: its certificate is a router certificate (router r3); a client connection needs a client certificate`}, `a client connection needs a client certificate`},
		// Controls: the rogue gets in when its certificate fits.
		{"control: router r3 as r3", rogue{kind: "link", addr: addr1, name: "r3", pair: nodePaths(r3Dir)}, []string{"accepted: link-hello"}, ``},
		{"control: client alice", rogue{kind: "client", addr: addr1, name: "alice", pair: clientPaths(alice)}, []string{"accepted: welcome"}, ``},
	}
	for _, c := range cases {
		out := c.r.run(t)
		t.Logf("%s: %s", c.name, out)
		expectPrefix(t, c.name, out, c.want...)
		if c.log != "" {
			lctx, lcancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := r1.awaitLine(lctx, regexp.MustCompile(c.log))
			lcancel()
			if err != nil {
				t.Errorf("%s: r1 never logged %q: %v", c.name, c.log, err)
			}
			r1.next = 0 // the next case searches the whole log again
		}
	}
	if r1.hasLine(regexp.MustCompile(`msg="link down".* link=r2`)) || r2.hasLine(regexp.MustCompile(`msg="link down"`)) {
		t.Fatalf("the real r1-r2 link went down during the hostile attempts:\n%s", r1.log())
	}
	// The mesh still routes: everything published at r1 reaches alice at r2.
	var events strings.Builder
	for i := range n {
		fmt.Fprintf(&events, "{\"seq\":%d}\n", i)
	}
	if out, err := runBin(t, ctx, strings.NewReader(events.String()), "sift", "pub", "--router", addr1, "--certs", alice); err != nil {
		t.Fatalf("pub: %v\n%s", err, out)
	}
	for len(got) < n {
		select {
		case l := <-gotc:
			got = append(got, l)
		case <-ctx.Done():
			t.Fatalf("subscriber got %d of %d events", len(got), n)
		}
	}
	for _, p := range []*logProc{r2, r1} {
		if err := p.stop(syscall.SIGTERM); err != nil {
			t.Fatalf("%s: %v\n%s", p.name, err, p.log())
		}
	}
}

// hasLine reports whether some stderr line so far matches re.
func (p *logProc) hasLine(re *regexp.Regexp) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.lines {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}
