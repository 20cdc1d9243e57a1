package main

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// Garbage collector settings. A router allocates per frame (frame bodies,
// decoded events, deliveries) and keeps little of it, so at Go's default
// GOGC=100 the collector runs often over a small live heap. siftd defaults
// to --gc-percent 400, which measured ~12% less router CPU per event on
// the issue-6 stock benchmark (docs/notes/issue-6.md), and, because the
// heap may then grow to five times the live heap between collections, to
// a soft memory limit of half the machine's memory (--memory-limit auto),
// beyond which the collector runs as often as it must. The environment
// variables GOGC and GOMEMLIMIT still apply when the flags are not given.

const (
	defaultGCPercent   = 400
	defaultMemoryLimit = "auto"
)

// gcFlags are the --gc-percent and --memory-limit flags.
type gcFlags struct {
	percent int
	limit   string
}

// addGCFlags registers the garbage collector flags.
func addGCFlags(f *pflag.FlagSet, g *gcFlags) {
	f.IntVar(&g.percent, "gc-percent", defaultGCPercent, "garbage collector target percentage (as GOGC): higher spends memory to save CPU; -1 collects only at --memory-limit")
	f.StringVar(&g.limit, "memory-limit", defaultMemoryLimit, "soft memory limit of the Go runtime (as GOMEMLIMIT), e.g. 2GiB or 512MiB; auto: half the machine's memory; off: none")
}

// gcSettings is what resolve decided: a value below zero for limit, or
// keepPercent/keepLimit, leaves the runtime's own setting.
type gcSettings struct {
	percent     int
	limit       int64
	keepPercent bool // GOGC set and --gc-percent not given
	keepLimit   bool // GOMEMLIMIT set and --memory-limit not given, or no limit wanted
}

// resolve turns the flags into settings. given reports whether a flag was
// given on the command line; getenv and memTotal are os.Getenv and
// machineMemory in siftd, stubs in tests.
func (g gcFlags) resolve(given func(string) bool, getenv func(string) string, memTotal func() (int64, bool)) (gcSettings, error) {
	s := gcSettings{percent: g.percent}
	if g.percent < -1 {
		return s, fmt.Errorf("--gc-percent %d: want -1 (off) or a percentage >= 0", g.percent)
	}
	s.keepPercent = !given("gc-percent") && getenv("GOGC") != ""
	if !given("memory-limit") && getenv("GOMEMLIMIT") != "" {
		s.keepLimit = true
		return s, nil
	}
	switch g.limit {
	case "off":
		s.keepLimit = true
	case "auto":
		total, ok := memTotal()
		if !ok {
			s.keepLimit = true // unknown machine memory: no limit
			break
		}
		s.limit = total / 2
	default:
		n, err := parseBytes(g.limit)
		if err != nil {
			return s, fmt.Errorf("--memory-limit: %w", err)
		}
		s.limit = n
	}
	if s.percent == -1 && !s.keepPercent && s.keepLimit {
		return s, fmt.Errorf("--gc-percent -1 needs a memory limit: give --memory-limit SIZE")
	}
	return s, nil
}

// apply sets the runtime's garbage collector and logs what it runs with.
func (s gcSettings) apply() {
	if !s.keepPercent {
		debug.SetGCPercent(s.percent)
	}
	if !s.keepLimit {
		debug.SetMemoryLimit(s.limit)
	}
	limit := debug.SetMemoryLimit(-1) // reads the limit
	percent := debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	lim := "none"
	if limit != math.MaxInt64 {
		lim = strconv.FormatInt(limit, 10)
	}
	slog.Info("garbage collector", "gc_percent", percent, "memory_limit_bytes", lim)
}

// parseBytes reads a size as GOMEMLIMIT writes it: digits and an optional
// unit B, KiB, MiB, GiB or TiB.
func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	mult, num := int64(1), s
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			mult, num = u.mult, strings.TrimSuffix(s, u.suffix)
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a size such as 2GiB, 512MiB or 1000000 (bytes), or auto or off", s)
	}
	return n * mult, nil
}

// machineMemory returns the machine's memory from /proc/meminfo, bounded
// by the cgroup (v2) limit when there is one; false elsewhere.
func machineMemory() (int64, bool) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	var total int64
	for line := range strings.SplitSeq(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, false
			}
			total = kb << 10
		}
	}
	if total == 0 {
		return 0, false
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && n < total {
			total = n
		}
	}
	return total, true
}
