package main

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestDeployNetns runs docs/deploy.md: every ```sh {host=X} block, line
// by line, on host X, where h1, h2 and h3 are network namespaces joined
// by a bridge (in a fourth namespace) with the page's addresses, and
// "ops" is the test's own namespace. A line ending in & runs in the
// background: siftd until the end (the test waits for "router ready",
// and for "link up" when it has --peer), sift sub until it exits, which
// it must do with status 0 after printing an event. A line marked
// "# refused" must fail; every other line must succeed.
//
// It needs root and iproute2 (ip netns) and skips, saying so, only
// without them.
func TestDeployNetns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: network namespaces need root")
	}
	if _, err := os.Stat(ipPath); err != nil {
		t.Skipf("skipped: network namespaces need iproute2 (%s): %v", ipPath, err)
	}
	doc, err := os.ReadFile("../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sh \\{host=(\\w+)\\}\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < 6 {
		t.Fatalf("docs/deploy.md has %d host blocks", len(blocks))
	}

	prefix := fmt.Sprintf("sd%d", os.Getpid()%100000)
	ns := map[string]string{}
	for _, h := range []string{"h1", "h2", "h3", "sw"} {
		ns[h] = prefix + h
		mustIP(t, "netns", "add", ns[h])
		t.Cleanup(func() { exec.Command(ipPath, "netns", "del", ns[h]).Run() })
		mustIP(t, "-n", ns[h], "link", "set", "lo", "up")
	}
	mustIP(t, "-n", ns["sw"], "link", "add", "br0", "type", "bridge")
	mustIP(t, "-n", ns["sw"], "link", "set", "br0", "up")
	for i, h := range []string{"h1", "h2", "h3"} {
		hostIf, swIf := fmt.Sprintf("%sv%d", prefix, i+1), fmt.Sprintf("%ss%d", prefix, i+1)
		mustIP(t, "link", "add", hostIf, "netns", ns[h], "type", "veth", "peer", "name", swIf, "netns", ns["sw"])
		mustIP(t, "-n", ns[h], "addr", "add", fmt.Sprintf("10.202.0.%d/24", i+1), "dev", hostIf)
		mustIP(t, "-n", ns[h], "link", "set", hostIf, "up")
		mustIP(t, "-n", ns["sw"], "link", "set", swIf, "master", "br0")
		mustIP(t, "-n", ns["sw"], "link", "set", swIf, "up")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	t.Chdir(t.TempDir())
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	command := func(host, line string) (string, []string) {
		if host == "ops" {
			return "/bin/sh", []string{"-c", "exec " + line}
		}
		return ipPath, []string{"netns", "exec", ns[host], "/bin/sh", "-c", "exec " + line}
	}
	var routers []*logProc
	type bg struct {
		p    *logProc
		line string
		mu   *sync.Mutex
		out  *strings.Builder
	}
	var subs []bg
	for _, b := range blocks {
		host := b[1]
		for _, line := range strings.Split(b[2], "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			refused := strings.HasSuffix(line, "# refused")
			line = strings.TrimSpace(strings.TrimSuffix(line, "# refused"))
			background := strings.HasSuffix(line, "&")
			line = strings.TrimSpace(strings.TrimSuffix(line, "&"))
			prog, args := command(host, line)
			t.Logf("%s$ %s", host, line)
			switch {
			case background && strings.HasPrefix(line, "siftd "):
				p := startLogProc(t, ctx, host+" "+line, nil, prog, args...)
				p.waitLine(t, ctx, readyRE)
				if strings.Contains(line, "--peer") {
					p.waitLine(t, ctx, regexp.MustCompile(`msg="link up"`))
				}
				routers = append(routers, p)
			case background:
				s := bg{line: line, mu: new(sync.Mutex), out: new(strings.Builder)}
				s.p = startLogProc(t, ctx, host+" "+line, func(l string) {
					s.mu.Lock()
					s.out.WriteString(l + "\n")
					s.mu.Unlock()
				}, prog, args...)
				s.p.waitLine(t, ctx, subReady)
				subs = append(subs, s)
			default:
				out, err := exec.CommandContext(ctx, prog, args...).CombinedOutput()
				switch {
				case refused && err == nil:
					t.Fatalf("%s: %s succeeded, the page says it is refused:\n%s", host, line, out)
				case refused:
					t.Logf("  refused as the page says: %s", strings.TrimSpace(string(out)))
				case err != nil:
					t.Fatalf("%s: %s: %v\n%s", host, line, err, out)
				}
			}
		}
	}
	for _, s := range subs {
		select {
		case <-s.p.done:
		case <-ctx.Done():
			t.Fatalf("%s never exited:\n%s", s.line, s.p.log())
		}
		s.mu.Lock()
		out := s.out.String()
		s.mu.Unlock()
		if s.p.err != nil || !strings.Contains(out, `"tenant":"a"`) {
			t.Fatalf("%s: %v, output %q\n%s", s.line, s.p.err, out, s.p.log())
		}
		t.Logf("%s: %s", s.line, strings.TrimSpace(out))
	}
	for i := len(routers) - 1; i >= 0; i-- {
		if err := routers[i].stop(syscall.SIGTERM); err != nil {
			t.Fatalf("%s after SIGTERM: %v\n%s", routers[i].name, err, routers[i].log())
		}
	}
}

// TestStaticBuild: siftd builds with CGO_ENABLED=0 into a static binary
// (no ELF interpreter), as deploy/Dockerfile needs for its distroless
// base.
func TestStaticBuild(t *testing.T) {
	out := filepath.Join(t.TempDir(), "siftd")
	cmd := exec.Command("go", "build", "-o", out, "github.com/sift-pubsub/sift/cmd/siftd")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("siftd built with CGO_ENABLED=0 has an ELF interpreter: not static")
		}
	}
	if df, _ := os.ReadFile("../../deploy/Dockerfile"); !strings.Contains(string(df), "CGO_ENABLED=0") || !strings.Contains(string(df), "distroless/static") {
		t.Fatal("deploy/Dockerfile no longer builds statically onto distroless/static")
	}
}
