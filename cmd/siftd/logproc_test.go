package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// logProc is a running binary built by TestMain whose stderr lines are all
// kept (without bound, so a chatty router never blocks on a full pipe) and
// can be waited for, and whose stdout lines go to a callback. Unlike proc
// it reaps the process itself, so a test can wait for a line and notice
// an exit at the same time; it is killed when the test ends.
type logProc struct {
	name string // for messages: "siftd r2", "sift sub at r5"
	cmd  *exec.Cmd

	mu     sync.Mutex
	lines  []string      // every stderr line so far
	exited bool          // the process exited and its output is read
	notify chan struct{} // closed and replaced when lines or exited change
	err    error         // cmd.Wait's result, once exited
	done   chan struct{} // closed once exited

	next int // first stderr line awaitLine has not looked at (one waiter at a time)
}

// startLogProc starts binary (a name built by TestMain, or an absolute
// path) with args; onStdout (nil: discard) gets every stdout line, from
// another goroutine.
func startLogProc(t *testing.T, ctx context.Context, name string, onStdout func(string), binary string, args ...string) *logProc {
	t.Helper()
	return startLogProcEnv(t, ctx, name, nil, onStdout, binary, args...)
}

// startLogProcEnv is startLogProc with the process's environment set to
// env (nil: the test's own).
func startLogProcEnv(t *testing.T, ctx context.Context, name string, env []string, onStdout func(string), binary string, args ...string) *logProc {
	t.Helper()
	if !filepath.IsAbs(binary) {
		binary = filepath.Join(bin, binary)
	}
	p := &logProc{name: name, cmd: exec.CommandContext(ctx, binary, args...),
		notify: make(chan struct{}), done: make(chan struct{})}
	p.cmd.Env = env
	if onStdout != nil {
		p.cmd.Stdout = &lineWriter{fn: onStdout}
	}
	p.cmd.Stderr = &lineWriter{fn: p.addLine}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		err := p.cmd.Wait() // returns once stdout and stderr are copied
		p.mu.Lock()
		p.err, p.exited = err, true
		close(p.notify)
		p.mu.Unlock()
		close(p.done)
	}()
	t.Cleanup(p.kill)
	return p
}

func (p *logProc) addLine(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines = append(p.lines, line)
	close(p.notify)
	p.notify = make(chan struct{})
}

// log returns every stderr line so far.
func (p *logProc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// awaitLine reads the stderr lines it has not looked at yet until one
// matches re and returns the submatches; an error if the process exits
// first or ctx ends.
func (p *logProc) awaitLine(ctx context.Context, re *regexp.Regexp) ([]string, error) {
	for {
		p.mu.Lock()
		for p.next < len(p.lines) {
			line := p.lines[p.next]
			p.next++
			if m := re.FindStringSubmatch(line); m != nil {
				p.mu.Unlock()
				return m, nil
			}
		}
		exited, changed := p.exited, p.notify
		p.mu.Unlock()
		if exited {
			return nil, fmt.Errorf("%s exited (%v) before logging %q", p.name, p.err, re)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: waiting for %q: %w", p.name, re, ctx.Err())
		}
	}
}

// waitLine is awaitLine failing the test with the process's stderr.
func (p *logProc) waitLine(t *testing.T, ctx context.Context, re *regexp.Regexp) []string {
	t.Helper()
	m, err := p.awaitLine(ctx, re)
	if err != nil {
		t.Fatalf("%v; stderr of %s:\n%s", err, p.name, p.log())
	}
	return m
}

// kill sends SIGKILL and waits for the exit.
func (p *logProc) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// stop sends sig and returns the exit error once the process exited.
func (p *logProc) stop(sig os.Signal) error {
	p.cmd.Process.Signal(sig)
	<-p.done
	return p.err
}

// lineWriter hands each complete line written to it to fn (a last line
// without a newline is dropped: the processes here end theirs).
type lineWriter struct {
	fn  func(string)
	buf []byte
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.fn(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	return len(b), nil
}
