package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
)

// TestPermissionsHostile runs siftd --permissions as a process and tries,
// with per-client certificates from other processes: subscribing outside
// the permitted filter, subscribing *, an unlisted client, publishing
// outside the publish filter (the events before the refused batch are
// delivered, the one outside never), a client with no publish filter,
// durable subscriptions and publishes outside the filters, and a reload
// on SIGHUP that widens a permission (and a broken file that keeps the
// old table). A refused subscription leaves the client's other
// subscriptions and connection up.
func TestPermissionsHostile(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	ca := newPKI(t, ctx, filepath.Join(dir, "ca"))
	r1Dir := ca.issue("router", "r1", filepath.Join(dir, "r1"))
	who := map[string]string{}
	for _, n := range []string{"alice", "bob", "audit", "mallory"} {
		who[n] = ca.issue("client", n, filepath.Join(dir, n))
	}
	permFile := filepath.Join(dir, "perms.json")
	writePerms := func(alice string) {
		os.WriteFile(permFile, []byte(`{
  "alice": {"publish": "tenant == \"a\"", "subscribe": `+alice+`},
  "bob":   {"subscribe": "tenant == \"b\""},
  "audit": {"subscribe": "*"}
}`), 0o644)
	}
	writePerms(`"tenant == \"a\""`)
	r1, addr := startRouter(t, ctx, dir, "r1", r1Dir, "--permissions", permFile)
	if !r1.hasLine(regexp.MustCompile(`msg="permissions loaded".* clients=3`)) {
		t.Fatalf("no permissions loaded line:\n%s", r1.log())
	}

	refusedSub := func(name, filter, want string) {
		t.Helper()
		out, err := runBin(t, ctx, nil, "sift", "sub", "--router", addr, "--certs", who[name], "--timeout", "5s", filter)
		t.Logf("sub %s %s: %v %s", name, filter, err, strings.TrimSpace(out))
		if err == nil || !strings.Contains(out, "forbidden") || !strings.Contains(out, want) {
			t.Errorf("sift sub as %s %q: %v\n%s\nwant a refusal with %q", name, filter, err, out, want)
		}
	}
	refusedSub("alice", `tenant == "b"`, `client "alice" may subscribe only within tenant == "a", which does not cover tenant == "b"`)
	refusedSub("alice", `*`, `which does not cover *`)
	refusedSub("alice", `price > 3`, `does not cover price > 3`)
	refusedSub("mallory", `*`, `client "mallory" is not in the permissions file`)
	// sift sub --filter-file reads the filter from a file, checked alike.
	ff := filepath.Join(dir, "filter.txt")
	os.WriteFile(ff, []byte("\n  tenant == \"b\"\n"), 0o644)
	if out, err := runBin(t, ctx, nil, "sift", "sub", "--router", addr, "--certs", who["alice"], "--timeout", "5s", "--filter-file", ff); err == nil ||
		!strings.Contains(out, `which does not cover tenant == "b"`) {
		t.Errorf("sift sub --filter-file outside: %v\n%s", err, out)
	}
	os.WriteFile(ff, []byte(`tenant == "a" && seq exists`+"\n"), 0o644)

	// Subscribers that are allowed: audit sees everything that is
	// accepted, alice her tenant.
	subLines := func(name string, filter ...string) chan string {
		ch := make(chan string, 100)
		args := append([]string{"sub", "--router", addr, "--certs", who[name], "--timeout", "60s"}, filter...)
		p := startLogProc(t, ctx, "sift sub "+name, func(l string) { ch <- l }, "sift", args...)
		p.waitLine(t, ctx, subReady)
		return ch
	}
	audit := subLines("audit", "*")
	aliceSub := subLines("alice", "--filter-file", ff)

	// One connection, one refused subscription: the other stays.
	cl, err := certs.Load(who["alice"], certs.Client)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(ctx, addr, client.Options{TLS: cl.ClientConfig(), Name: "alice-go"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	kept, err := c.Subscribe(ctx, `tenant == "a"`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Subscribe(ctx, `tenant == "b"`)
	var pe *wire.ProtocolError
	if !errors.As(err, &pe) || pe.Code != wire.CodeForbidden {
		t.Fatalf("second subscription: %v, want a CodeForbidden refusal", err)
	}
	if c.Err() != nil {
		t.Fatalf("the connection ended after a refused subscription: %v", c.Err())
	}

	// alice publishes: 3 events of her tenant, then one of tenant b.
	in := "{\"tenant\":\"a\",\"seq\":0}\n{\"tenant\":\"a\",\"seq\":1}\n{\"tenant\":\"a\",\"seq\":2}\n"
	if out, err := runBin(t, ctx, strings.NewReader(in), "sift", "pub", "--router", addr, "--certs", who["alice"]); err != nil {
		t.Fatalf("pub as alice: %v\n%s", err, out)
	}
	out, err := runBin(t, ctx, strings.NewReader("{\"tenant\":\"b\",\"seq\":3}\n"), "sift", "pub", "--router", addr, "--certs", who["alice"])
	t.Logf("pub outside: %v %s", err, strings.TrimSpace(out))
	if err == nil || !strings.Contains(out, "forbidden") || !strings.Contains(out, `may publish only events matching tenant == "a"`) {
		t.Errorf("pub as alice of tenant b: %v\n%s", err, out)
	}
	out, err = runBin(t, ctx, strings.NewReader("{\"tenant\":\"b\",\"seq\":4}\n"), "sift", "pub", "--router", addr, "--certs", who["bob"])
	t.Logf("pub bob: %v %s", err, strings.TrimSpace(out))
	if err == nil || !strings.Contains(out, `client "bob" may not publish`) {
		t.Errorf("pub as bob: %v\n%s", err, out)
	}
	out, err = runBin(t, ctx, strings.NewReader("{\"tenant\":\"a\",\"seq\":5}\n"), "sift", "pub", "--router", addr, "--certs", who["mallory"])
	if err == nil || !strings.Contains(out, `client "mallory" is not in the permissions file`) {
		t.Errorf("pub as mallory: %v\n%s", err, out)
	}
	// Durable subscriptions and publishes obey the same filters.
	out, err = runBin(t, ctx, nil, "sift", "sub", "--router", addr, "--certs", who["alice"], "--durable", "d1", "--out", filepath.Join(dir, "d1.log"), "--timeout", "5s", `tenant == "b"`)
	t.Logf("durable sub outside: %v %s", err, strings.TrimSpace(out))
	if err == nil || !strings.Contains(out, "forbidden") || !strings.Contains(out, "does not cover") {
		t.Errorf("durable sub as alice of tenant b: %v\n%s", err, out)
	}
	out, err = runBin(t, ctx, strings.NewReader("{\"tenant\":\"b\",\"seq\":6}\n"), "sift", "pub", "--router", addr, "--certs", who["alice"], "--durable", "--timeout", "5s")
	t.Logf("durable pub outside: %v %s", err, strings.TrimSpace(out))
	if err == nil || !strings.Contains(out, "may publish only") {
		t.Errorf("durable pub as alice of tenant b: %v\n%s", err, out)
	}

	// Exactly the three accepted events arrive, at audit, alice's sift sub
	// and alice's kept subscription.
	for name, ch := range map[string]chan string{"audit": audit, "alice": aliceSub} {
		for i := range 3 {
			select {
			case l := <-ch:
				if !strings.Contains(l, fmt.Sprintf(`"seq":%d`, i)) {
					t.Fatalf("%s got %s, want seq %d", name, l, i)
				}
			case <-ctx.Done():
				t.Fatalf("%s got %d of 3 events", name, i)
			}
		}
	}
	for i := range 3 {
		ev, err := kept.Next(ctx)
		if err != nil {
			t.Fatalf("kept subscription: %d of 3: %v", i, err)
		}
		_ = ev
	}
	select {
	case l := <-audit:
		t.Fatalf("audit got a refused event: %s", l)
	case <-time.After(300 * time.Millisecond):
	}

	// Reload: a broken file keeps the table; a good one widens alice's.
	os.WriteFile(permFile, []byte(`{"alice": {"subscribe": "x >"}}`), 0o644)
	r1.cmd.Process.Signal(syscall.SIGHUP)
	r1.waitLine(t, ctx, regexp.MustCompile(`msg="reload failed: permissions kept"`))
	refusedSub("alice", `*`, `does not cover *`)
	writePerms(`"*"`)
	r1.cmd.Process.Signal(syscall.SIGHUP)
	r1.waitLine(t, ctx, regexp.MustCompile(`msg="permissions reloaded"`))
	if out, err := runBin(t, ctx, nil, "sift", "sub", "--router", addr, "--certs", who["alice"], "--timeout", "1s", "*"); err != nil {
		t.Fatalf("sub * as alice after the reload: %v\n%s", err, out)
	}
	if err := r1.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("r1: %v\n%s", err, r1.log())
	}
}
