package poset_test

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The benchmark machine is shared (load well above its 2 cores), so wall
// time mostly measures waiting for a CPU. The benchmarks therefore measure
// the benchmark thread's own CPU time (CLOCK_THREAD_CPUTIME_ID) around the
// operation: time descheduled and background GC work on other threads are
// excluded, GC assists are included.

// threadClock reads the calling thread's CPU clock. Callers lock the
// goroutine to its thread first (lockThread).
func threadClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}

// lockThread pins the benchmark goroutine to its OS thread for the
// duration of the benchmark, so the thread clock is its clock.
func lockThread(b *testing.B) {
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
}
