// Package cpuclock reads CPU clocks for benchmarks on a shared machine,
// where wall time mostly measures waiting for a CPU: the CPU time of the
// whole process (user plus system, every thread) and that of the calling
// thread (time descheduled and work on other threads, such as background
// GC, excluded; GC assists included).
//
// Where the platform has no such clock, Supported is false and the clocks
// read zero.
package cpuclock

import "runtime"

// LockThread pins the calling goroutine to its OS thread, so that Thread
// is its clock, and returns the function that unpins it (for b.Cleanup or
// defer).
func LockThread() (unlock func()) {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
