package mesh

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The machine running the benchmarks is shared, so wall time mostly
// measures waiting for a CPU. Benchmarks here also report the benchmark
// thread's own CPU time (CLOCK_THREAD_CPUTIME_ID) per operation: time
// descheduled and background GC on other threads are excluded, GC assists
// are included.

// threadClock reads the calling thread's CPU clock; callers lock the
// goroutine to its thread first (lockThread).
func threadClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}

// lockThread pins the benchmark goroutine to its OS thread for the rest
// of the benchmark, so the thread clock is its clock.
func lockThread(b *testing.B) {
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
}
