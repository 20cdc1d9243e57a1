package main

import (
	"context"
	"os"
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

// TestSubFiltersReconnects: sift sub --filters keeps its filters across a
// restart of its router, on every connection the file is spread over
// (--max-subscriptions-per-conn 2 puts its three filters on two): it says
// each connection was lost, dials again, subscribes that connection's
// filters again, writes "ready 3" again once both are back, and gets what
// is published after with the ids of the file. Before, it exited on the
// first lost connection, and its router had dropped its filters.
func TestSubFiltersReconnects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	initCerts(t, ctx, certDir)
	addr := freeUDPAddr(t)
	start := func() *logProc {
		p := startLogProc(t, ctx, "siftd r1", nil, "siftd", "--name", "r1", "--listen", addr, "--certs", certDir,
			"--data", filepath.Join(dir, "data"), "--max-subscriptions-per-conn", "2")
		p.waitLine(t, ctx, readyRE)
		return p
	}
	subsFile := filepath.Join(dir, "subs.txt")
	if err := os.WriteFile(subsFile, []byte("n == 1\nn < 2\n# the second connection's:\nn == 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r1 := start()
	got := make(chan string, 10)
	sub := startLogProc(t, ctx, "sift sub --filters", func(l string) { got <- l }, "sift", "sub", "--router", addr, "--certs", certDir,
		"--filters", subsFile, "--count", "2", "--timeout", "80s")
	ready := func() {
		t.Helper()
		if m := sub.waitLine(t, ctx, subFiltersReady); m[1] != "3" {
			t.Fatalf("ready %s, want ready 3", m[1])
		}
	}
	ready()
	pubExpect := func(ev, want string) {
		t.Helper()
		if out, err := runBin(t, ctx, strings.NewReader(ev+"\n"), "sift", "pub", "--router", addr, "--certs", certDir); err != nil {
			t.Fatalf("pub: %v\n%s", err, out)
		}
		select {
		case l := <-got:
			if l != want {
				t.Fatalf("got %s, want %s", l, want)
			}
		case <-ctx.Done():
			t.Fatalf("waiting for %s:\n%s", want, sub.log())
		}
	}
	pubExpect(`{"n":1}`, `{"subs":[0,1],"event":{"n":1}}`)
	if err := r1.stop(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	lost := regexp.MustCompile(`^connection (\d) to \S+ lost .*; reconnecting$`)
	seen := map[string]bool{}
	for len(seen) < 2 {
		seen[sub.waitLine(t, ctx, lost)[1]] = true
	}
	r1 = start()
	ready()
	pubExpect(`{"n":2}`, `{"subs":[2],"event":{"n":2}}`) // the second connection's alone
	select {
	case <-sub.done:
		if sub.err != nil {
			t.Fatalf("sift sub --filters: %v\n%s", sub.err, sub.log())
		}
	case <-ctx.Done():
		t.Fatal("sift sub --filters did not exit after --count 2")
	}
	r1.stop(syscall.SIGTERM)
}

// TestSubFiltersSurvivesAStall: sift sub --filters stopped (SIGSTOP) for
// longer than a plain client's 5 s idle timeout, as a niced subscriber is
// starved on a loaded machine, keeps its connection when it runs again:
// it reports no lost connection, and an event published after is
// delivered. Before, it timed its connection out on waking ("timeout: no
// recent network activity"), and its router had dropped its filters.
func TestSubFiltersSurvivesAStall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	initCerts(t, ctx, certDir)
	r1 := startLogProc(t, ctx, "siftd r1", nil, "siftd", "--name", "r1", "--listen", "127.0.0.1:0", "--certs", certDir,
		"--data", filepath.Join(dir, "data"))
	addr := r1.waitLine(t, ctx, readyRE)[1]
	subsFile := filepath.Join(dir, "subs.txt")
	if err := os.WriteFile(subsFile, []byte("n == 1\nn > 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 10)
	sub := startLogProc(t, ctx, "sift sub --filters", func(l string) { got <- l }, "sift", "sub", "--router", addr, "--certs", certDir,
		"--filters", subsFile, "--count", "1", "--timeout", "50s")
	sub.waitLine(t, ctx, subFiltersReady)
	if err := sub.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(7 * time.Second) // the stall itself, not a wait for an outcome
	if err := sub.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if out, err := runBin(t, ctx, strings.NewReader(`{"n":1}`+"\n"), "sift", "pub", "--router", addr, "--certs", certDir); err != nil {
		t.Fatalf("pub: %v\n%s", err, out)
	}
	select {
	case l := <-got:
		if want := `{"subs":[0,1],"event":{"n":1}}`; l != want {
			t.Fatalf("got %s, want %s", l, want)
		}
	case <-ctx.Done():
		t.Fatalf("no delivery after the stall:\n%s", sub.log())
	}
	<-sub.done
	if sub.err != nil || strings.Contains(sub.log(), "lost") {
		t.Fatalf("sift sub --filters after a stall: %v\n%s", sub.err, sub.log())
	}
	r1.stop(syscall.SIGTERM)
}
