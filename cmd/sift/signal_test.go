package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBusyCommandStopsOnFirstSignal: a command that computes without
// looking at its context (here the Scribe simulator's paper report,
// minutes of work) still stops on the first SIGINT or SIGTERM: main gives
// it signalGrace, then exits with status 130 saying so.
func TestBusyCommandStopsOnFirstSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "sim", "scribe", "--report", "paper")
			cmd.Env = append(os.Environ(), "SIFT_TEST_MAIN=1")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			sc := bufio.NewScanner(stderr)
			for sc.Scan() && !strings.Contains(sc.Text(), "paper:") { // its first progress line: running
			}
			start := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			var last string
			go func() {
				for sc.Scan() {
					last = sc.Text()
				}
				done <- cmd.Wait()
			}()
			select {
			case err := <-done:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
					t.Fatalf("exit %v, want status %d", err, exitInterrupted)
				}
				if !strings.Contains(last, "sift: interrupted") {
					t.Errorf("last stderr line %q, want the interruption named", last)
				}
			case <-time.After(signalGrace + 20*time.Second):
				t.Fatalf("still running %v after one %v", time.Since(start), sig)
			}
			t.Logf("stopped %v after the signal: %s", time.Since(start).Round(time.Millisecond), last)
		})
	}
}
