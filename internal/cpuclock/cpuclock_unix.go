//go:build unix

package cpuclock

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Supported reports whether the clocks are read from the system.
const Supported = true

// Process returns the CPU time this process has used so far.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Thread returns the CPU time the calling OS thread has used so far; lock
// the goroutine to its thread first (LockThread).
func Thread() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
