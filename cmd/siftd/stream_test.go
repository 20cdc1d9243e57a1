package main

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPubStream: sift pub --stream publishes a line as soon as it arrives
// on a pipe that stays open (no Flush, no EOF: the client's linger sends
// the partial batch); a bad line stops it naming the line, after the
// events before it are published; a second run stops on the first SIGINT
// with its pipe still open, and so does plain pub (which reads its whole
// input first).
func TestPubStream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	initCerts(t, ctx, certDir)
	_, addr := startRouter(t, ctx, dir, "r1", certDir)
	got := make(chan string, 10)
	sub := startLogProc(t, ctx, "sift sub", func(l string) { got <- l }, "sift", "sub", "--router", addr, "--certs", certDir, "n exists")
	sub.waitLine(t, ctx, subReady)

	pub := exec.CommandContext(ctx, filepath.Join(bin, "sift"), "pub", "--stream", "--router", addr, "--certs", certDir)
	stdin, _ := pub.StdinPipe()
	var out strings.Builder
	pub.Stdout, pub.Stderr = &out, &out
	if err := pub.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Write([]byte("{\"n\":1}\n"))
	select {
	case l := <-got:
		if !strings.Contains(l, `"n":1`) {
			t.Fatalf("got %s", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a streamed line was not delivered while the pipe stayed open")
	}
	stdin.Write([]byte("{\"n\":2}\n{\"n\":[3]}\n{\"n\":4}\n"))
	err := pub.Wait()
	t.Logf("pub --stream: %v %s", err, strings.TrimSpace(out.String()))
	if err == nil || !strings.Contains(out.String(), "2 of 2 events accepted by the router: stdin:3:") || !strings.Contains(out.String(), "attribute n") {
		t.Fatalf("pub --stream with a bad line 3: %v\n%s", err, out.String())
	}
	select {
	case l := <-got:
		if !strings.Contains(l, `"n":2`) {
			t.Fatalf("got %s, want n 2", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the event before the bad line was not delivered")
	}

	// SIGINT with the pipe open: pub stops at once.
	pub = exec.CommandContext(ctx, filepath.Join(bin, "sift"), "pub", "--stream", "--router", addr, "--certs", certDir)
	stdin, _ = pub.StdinPipe()
	defer stdin.Close()
	out.Reset()
	pub.Stdout, pub.Stderr = &out, &out
	if err := pub.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Write([]byte("{\"n\":5}\n"))
	<-got
	pub.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- pub.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("pub --stream after SIGINT: %v, want exit 130\n%s", err, out.String())
		}
		t.Logf("after SIGINT: %s", strings.TrimSpace(out.String()))
	case <-time.After(10 * time.Second):
		t.Fatal("pub --stream ignored SIGINT")
	}

	// Plain pub reads its whole input before publishing: SIGINT while the
	// pipe stays open stops it at once too, publishing nothing.
	pub = exec.CommandContext(ctx, filepath.Join(bin, "sift"), "pub", "--router", addr, "--certs", certDir)
	plainIn, _ := pub.StdinPipe()
	defer plainIn.Close()
	out.Reset()
	pub.Stdout, pub.Stderr = &out, &out
	if err := pub.Start(); err != nil {
		t.Fatal(err)
	}
	plainIn.Write([]byte("{\"n\":6}\n"))
	time.Sleep(time.Second) // let it start and block reading the open pipe: it prints nothing to wait on
	pub.Process.Signal(syscall.SIGINT)
	go func() { done <- pub.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("plain pub after SIGINT: %v, want exit 130\n%s", err, out.String())
		}
		t.Logf("plain pub after SIGINT: %s", strings.TrimSpace(out.String()))
	case <-time.After(10 * time.Second):
		t.Fatal("plain pub reading an open pipe ignored SIGINT")
	}
	select {
	case l := <-got:
		t.Fatalf("plain pub stopped by SIGINT published %s", l)
	case <-time.After(500 * time.Millisecond):
	}
}

// TestPubDialTimeout: sift pub with nothing listening waits the whole
// --dial-timeout (quic-go's own 5 s handshake limit no longer cuts it
// short) and names the address.
func TestPubDialTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	certDir := filepath.Join(t.TempDir(), "certs")
	initCerts(t, ctx, certDir)
	dead := freeUDPAddr(t)
	began := time.Now()
	out, err := runBin(t, ctx, strings.NewReader("{\"a\":1}\n"), "sift", "pub", "--router", dead, "--certs", certDir, "--dial-timeout", "7s")
	took := time.Since(began)
	if err == nil || !strings.Contains(out, "dial "+dead) || took < 6*time.Second {
		t.Fatalf("pub to nothing: %v after %v\n%s", err, took, out)
	}
	t.Logf("after %v: %s", took.Round(time.Millisecond), strings.TrimSpace(out))
}
