package main

import (
	"context"
	"net"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestRestartIsNoticedAtOnce: siftd keeps its stateless-reset key in the
// data folder, so after a crash (SIGKILL) and a restart on the same port a
// connected client is told by a stateless reset on its next packet (a
// keep-alive, at most 10 s) instead of waiting for the 30 s idle timeout.
// In practice the reset arrives within milliseconds. Control, run by hand:
// deleting stateless-reset.key before the restart leaves the client
// hanging (no reset after 8 s).
func TestRestartIsNoticedAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	certDir, data := filepath.Join(dir, "certs"), filepath.Join(dir, "data")
	if out, err := runBin(t, ctx, nil, "sift", "certs", "init", certDir); err != nil {
		t.Fatalf("certs init: %v\n%s", err, out)
	}
	addr := freeUDPAddr(t)
	args := []string{"--name", "r1", "--listen", addr, "--certs", certDir, "--data", data}
	first := startProc(t, ctx, "siftd", args...)
	first.waitLine(t, ctx, readyRE)
	sub := startProc(t, ctx, "sift", "sub", "--router", addr, "--certs", certDir, "a exists")
	sub.waitLine(t, ctx, subReady)

	first.cmd.Process.Kill()
	first.wait()
	second := startProc(t, ctx, "siftd", args...)
	second.waitLine(t, ctx, readyRE)
	start := time.Now()
	err, stderr := sub.wait()
	if err == nil || !regexp.MustCompile(`(?i)stateless reset`).MatchString(stderr) {
		t.Fatalf("sub after the restart: %v, want a stateless reset error; stderr:\n%s", err, stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("the client noticed after %v; the idle timeout, not a reset, ended it", d)
	}
	second.cmd.Process.Kill()
	second.wait()
}

// freeUDPAddr returns a loopback UDP address that was free a moment ago.
func freeUDPAddr(t *testing.T) string {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().String()
}
