package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMatchProgress: with --progress, sift match reports the load as
// lines on stderr and still prints the contract's matches.
func TestMatchProgress(t *testing.T) {
	var subs strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&subs, "price > %d\n", i)
	}
	path := writeFile(t, "subs.txt", subs.String())
	events := writeFile(t, "events.jsonl", `{"price":2.5}`+"\n")
	out, errOut, code := sift(t, "match", "--subs", path, "--events", events, "--progress")
	if code != 0 || out != `{"event":0,"matches":[0,1,2]}`+"\n" {
		t.Fatalf("status %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, want := range []string{"match: loading: 1024 subscriptions", "match: read 3000 subscriptions", "match: loaded 3000 subscriptions"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// TestMatchStopsOnFirstSignal: sift match loading from a pipe that never
// ends stops on the first SIGINT (and SIGTERM), with status 130 and
// nothing on stdout.
func TestMatchStopsOnFirstSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "subs.fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			events := writeFile(t, "events.jsonl", `{"price":1}`+"\n")
			cmd := exec.Command(os.Args[0], "match", "--subs", fifo, "--events", events, "--progress")
			cmd.Env = append(os.Environ(), "SIFT_TEST_MAIN=1")
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close() // kept open: the load waits for more lines
			for i := range 2048 {
				fmt.Fprintf(w, "price > %d\n", i)
			}
			sc := bufio.NewScanner(stderr)
			for sc.Scan() && !strings.Contains(sc.Text(), "match: loading:") {
			}
			start := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				for sc.Scan() {
				}
				done <- cmd.Wait()
			}()
			select {
			case err := <-done:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
					t.Fatalf("exit %v, want status %d", err, exitInterrupted)
				}
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running 20s after one %v", sig)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q after a signal", stdout.String())
			}
			t.Logf("stopped %v after the signal", time.Since(start))
		})
	}
}
