package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSystemdUnit runs siftd as deploy/siftd.service would, without
// systemd: no arguments (ExecStart), only the unit's Environment= and the
// SIFT_* lines its comment gives for /etc/sift/siftd.env (paths moved
// into a temporary folder, addresses on 127.0.0.1:0), a router
// certificate issued for the name. siftd must start from that
// environment alone and log JSON; ExecReload's SIGHUP must reload its
// certificates and permissions; KillSignal's SIGTERM must end it with
// status 0 well within TimeoutStopSec; and the ExecStartPre sysctl must
// raise the UDP buffers at least to what siftd asks for when they are
// lower.
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	unitText, err := os.ReadFile("../../deploy/siftd.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := string(unitText)
	directive := func(key string) string {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + key + `=(.*)$`).FindStringSubmatch(unit)
		if m == nil {
			t.Fatalf("deploy/siftd.service has no %s=", key)
		}
		return m[1]
	}
	if got := directive("ExecStart"); got != "/usr/local/bin/siftd" {
		t.Fatalf("ExecStart=%s: this test runs siftd with no arguments", got)
	}
	if got := directive("KillSignal"); got != "SIGTERM" {
		t.Fatalf("KillSignal=%s, want SIGTERM (siftd drains on it)", got)
	}
	if got := directive("ExecReload"); got != "/bin/kill -HUP $MAINPID" {
		t.Fatalf("ExecReload=%s, want a SIGHUP", got)
	}
	stopSec, err := strconv.Atoi(directive("TimeoutStopSec"))
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	etc := newPKI(t, ctx, filepath.Join(dir, "ca")).issue("router", "r1", filepath.Join(dir, "etc"))
	perms := filepath.Join(etc, "permissions.json")
	os.WriteFile(perms, []byte(`{"alice": {"subscribe": "tenant == \"a\""}}`), 0o644)
	moved := map[string]string{
		"SIFT_CERTS": etc, "SIFT_DATA": filepath.Join(dir, "data"), "SIFT_NAME": "r1",
		"SIFT_LISTEN": "127.0.0.1:0", "SIFT_METRICS": "127.0.0.1:0", "SIFT_PERMISSIONS": perms,
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	seen := map[string]bool{}
	add := func(kv string) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, "SIFT_") {
			t.Fatalf("unit environment %q is not a SIFT_ variable", kv)
		}
		if k == "SIFT_PEER" {
			return // no peers for a router alone
		}
		if m, ok := moved[k]; ok {
			v = m
		}
		seen[k] = true
		env = append(env, k+"="+v)
	}
	for _, kv := range strings.Fields(directive("Environment")) {
		add(kv)
	}
	for _, m := range regexp.MustCompile(`(?m)^#   (SIFT_\w+=\S+)$`).FindAllStringSubmatch(unit, -1) {
		add(m[1])
	}
	for k := range moved {
		if !seen[k] {
			t.Fatalf("the unit sets no %s (Environment= or the siftd.env example)", k)
		}
	}

	p := startLogProcEnv(t, ctx, "siftd (unit)", env, nil, "siftd") // no arguments, as ExecStart
	p.waitLine(t, ctx, regexp.MustCompile(`"msg":"router ready"`))
	for _, line := range strings.Split(p.log(), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("SIFT_LOG_FORMAT=json, yet a log line is not JSON: %q", line)
		}
	}
	if m := regexp.MustCompile(`"want":(\d+)`).FindStringSubmatch(p.log()); m != nil {
		want, _ := strconv.Atoi(m[1])
		for _, kv := range regexp.MustCompile(`net\.core\.[rw]mem_max=(\d+)`).FindAllStringSubmatch(directive("ExecStartPre"), -1) {
			if got, _ := strconv.Atoi(kv[1]); got < want {
				t.Errorf("ExecStartPre sets %s, below the %d bytes siftd asks for", kv[0], want)
			}
		}
	}
	p.cmd.Process.Signal(syscall.SIGHUP)
	p.waitLine(t, ctx, regexp.MustCompile(`"msg":"certificates reloaded"`))
	p.waitLine(t, ctx, regexp.MustCompile(`"msg":"permissions reloaded"`))
	began := time.Now()
	if err := p.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("siftd after SIGTERM: %v\n%s", err, p.log())
	}
	took := time.Since(began)
	if took > time.Duration(stopSec)*time.Second/2 {
		t.Errorf("SIGTERM took %v, too close to TimeoutStopSec=%d", took, stopSec)
	}
	t.Logf("siftd from the unit's environment (%s): %d JSON log lines, reloaded on SIGHUP, stopped %v after SIGTERM", strings.Join(env[1:], " "), len(strings.Split(p.log(), "\n")), took.Round(time.Millisecond))
}
