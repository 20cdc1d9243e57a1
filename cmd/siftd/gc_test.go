package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestGCResolve(t *testing.T) {
	const gib = int64(1) << 30
	mem := func() (int64, bool) { return 8 * gib, true }
	noMem := func() (int64, bool) { return 0, false }
	for _, tc := range []struct {
		name    string
		flags   gcFlags
		given   []string
		env     map[string]string
		mem     func() (int64, bool)
		want    gcSettings
		wantErr string
	}{
		{name: "defaults", flags: gcFlags{400, "auto"}, mem: mem, want: gcSettings{percent: 400, limit: 4 * gib}},
		{name: "explicit size", flags: gcFlags{200, "512MiB"}, given: []string{"gc-percent", "memory-limit"}, mem: mem, want: gcSettings{percent: 200, limit: 512 << 20}},
		{name: "bytes", flags: gcFlags{100, "1000000"}, mem: mem, want: gcSettings{percent: 100, limit: 1000000}},
		{name: "off", flags: gcFlags{400, "off"}, mem: mem, want: gcSettings{percent: 400, keepLimit: true}},
		{name: "unknown memory", flags: gcFlags{400, "auto"}, mem: noMem, want: gcSettings{percent: 400, keepLimit: true}},
		{name: "environment kept", flags: gcFlags{400, "auto"}, env: map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}, mem: mem,
			want: gcSettings{percent: 400, keepPercent: true, keepLimit: true}},
		{name: "flags beat environment", flags: gcFlags{300, "2GiB"}, given: []string{"gc-percent", "memory-limit"}, env: map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}, mem: mem,
			want: gcSettings{percent: 300, limit: 2 * gib}},
		{name: "collector off with a limit", flags: gcFlags{-1, "1GiB"}, mem: mem, want: gcSettings{percent: -1, limit: gib}},
		{name: "collector off without a limit", flags: gcFlags{-1, "off"}, mem: mem, wantErr: "needs a memory limit"},
		{name: "bad percent", flags: gcFlags{-5, "auto"}, mem: mem, wantErr: "--gc-percent -5"},
		{name: "bad size", flags: gcFlags{400, "2GB"}, mem: mem, wantErr: `"2GB" is not a size`},
		{name: "zero size", flags: gcFlags{400, "0"}, mem: mem, wantErr: "is not a size"},
		{name: "overflow", flags: gcFlags{400, "9999999999TiB"}, mem: mem, wantErr: "is not a size"},
	} {
		given := func(name string) bool { return strings.Contains(strings.Join(tc.given, ","), name) }
		getenv := func(k string) string { return tc.env[k] }
		got, err := tc.flags.resolve(given, getenv, tc.mem)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: got %+v, %v; want an error containing %q", tc.name, got, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case got != tc.want:
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestGCApply(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	defer func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}()
	gcSettings{percent: 250, limit: 3 << 30}.apply()
	if got := debug.SetGCPercent(-1); got != 250 {
		t.Errorf("gc percent %d, want 250", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Errorf("memory limit %d, want %d", got, 3<<30)
	}
	debug.SetGCPercent(77)
	gcSettings{percent: 400, keepPercent: true, keepLimit: true}.apply()
	if got := debug.SetGCPercent(-1); got != 77 {
		t.Errorf("kept gc percent: %d, want 77", got)
	}
}

func TestMachineMemory(t *testing.T) {
	if n, ok := machineMemory(); ok && n < 1<<20 {
		t.Errorf("machine memory %d bytes: implausible", n)
	}
}
