package httpbench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// siftd is the router process under test.
type siftd struct {
	cmd         *exec.Cmd
	httpAddr    string
	metricsAddr string
	stderr      *lineLog
}

// lineLog keeps the process's last lines for error messages.
type lineLog struct{ lines []string }

func (l *lineLog) String() string { return strings.Join(l.lines, "\n") }

var (
	httpReadyRE    = regexp.MustCompile(`msg="http ready" addr=(\S+)`)
	metricsReadyRE = regexp.MustCompile(`msg="metrics ready" addr=(\S+)`)
	routerReadyRE  = regexp.MustCompile(`msg="router ready"`)
)

// startSiftd makes certificates in dir and starts bin as router "bench"
// with --http and --metrics on free loopback ports, plus extra flags.
func startSiftd(ctx context.Context, bin, sift, dir string, extra []string) (*siftd, error) {
	certDir := filepath.Join(dir, "certs")
	if out, err := exec.CommandContext(ctx, sift, "certs", "init", certDir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("sift certs init: %v: %s", err, out)
	}
	args := append([]string{"--name", "bench", "--listen", "127.0.0.1:0", "--certs", certDir, "--data", filepath.Join(dir, "data"),
		"--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0"}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &siftd{cmd: cmd, stderr: &lineLog{}}
	found := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		ready := false
		for sc.Scan() {
			line := sc.Text()
			if len(s.stderr.lines) < 200 {
				s.stderr.lines = append(s.stderr.lines, line)
			}
			if m := httpReadyRE.FindStringSubmatch(line); m != nil {
				s.httpAddr = m[1]
			}
			if m := metricsReadyRE.FindStringSubmatch(line); m != nil {
				s.metricsAddr = m[1]
			}
			if !ready && routerReadyRE.MatchString(line) && s.httpAddr != "" && s.metricsAddr != "" {
				ready = true
				found <- nil
			}
		}
		if !ready {
			found <- fmt.Errorf("siftd exited before it was ready:\n%s", s.stderr)
		}
	}()
	select {
	case err := <-found:
		if err != nil {
			return nil, err
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("siftd not ready after 30s:\n%s", s.stderr)
	}
	return s, nil
}

func (s *siftd) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// cpu returns the process's user plus system CPU time (/proc/PID/stat).
func (s *siftd) cpu() (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond, nil // USER_HZ 100
}

// rss returns the process's resident memory (VmRSS) in bytes.
func (s *siftd) rss() (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS")
}

// metrics reads the named unlabelled metrics from siftd's /metrics.
func (s *siftd) metrics(names ...string) (map[string]float64, error) {
	res, err := http.Get("http://" + s.metricsAddr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		for _, n := range names {
			if v, ok := strings.CutPrefix(line, n+" "); ok {
				out[n], _ = strconv.ParseFloat(v, 64)
			}
		}
	}
	return out, nil
}
