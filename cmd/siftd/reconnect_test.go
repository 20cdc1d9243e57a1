package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSubReconnects: a plain sift sub survives a restart of its router:
// it says the connection was lost, reconnects (trying the --router list
// in turn: the first address never answers), installs its filter again,
// writes "ready" again, and gets what is published after.
func TestSubReconnects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	initCerts(t, ctx, certDir)
	addr := freeUDPAddr(t)
	dead := freeUDPAddr(t)
	start := func() *logProc {
		p := startLogProc(t, ctx, "siftd r1", nil, "siftd", "--name", "r1", "--listen", addr, "--certs", certDir, "--data", filepath.Join(dir, "data"))
		p.waitLine(t, ctx, readyRE)
		return p
	}
	r1 := start()
	got := make(chan string, 10)
	sub := startLogProc(t, ctx, "sift sub", func(l string) { got <- l }, "sift", "sub", "--router", addr+","+dead, "--certs", certDir, "--count", "2", "--timeout", "80s", "n exists")
	sub.waitLine(t, ctx, subReady)
	pub := func(ev string) {
		t.Helper()
		if out, err := runBin(t, ctx, strings.NewReader(ev+"\n"), "sift", "pub", "--router", addr, "--certs", certDir); err != nil {
			t.Fatalf("pub: %v\n%s", err, out)
		}
	}
	expect := func(want string) {
		t.Helper()
		select {
		case l := <-got:
			if !strings.Contains(l, want) {
				t.Fatalf("got %s, want %s", l, want)
			}
		case <-ctx.Done():
			t.Fatalf("waiting for %s:\n%s", want, sub.log())
		}
	}
	pub(`{"n":1}`)
	expect(`"n":1`)
	if err := r1.stop(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sub.waitLine(t, ctx, regexp.MustCompile(`connection to \S+ lost .*; reconnecting`))
	r1 = start()
	sub.waitLine(t, ctx, subReady)
	pub(`{"n":2}`)
	expect(`"n":2`)
	select {
	case <-sub.done:
		if sub.err != nil {
			t.Fatalf("sift sub: %v\n%s", sub.err, sub.log())
		}
	case <-ctx.Done():
		t.Fatal("sift sub did not exit after --count 2")
	}
	r1.stop(syscall.SIGTERM)
}
