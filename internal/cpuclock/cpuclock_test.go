package cpuclock

import (
	"testing"
	"time"
)

// spinThread burns CPU on the calling thread until its thread clock has
// advanced by d, or until wall-clock limit has passed (a loaded machine may
// give the thread only a fraction of the wall time, so the work is measured
// by the clock under test, not by the wall). It returns the thread clock's
// advance.
func spinThread(d, limit time.Duration) time.Duration {
	t0 := Thread()
	for end := time.Now().Add(limit); time.Now().Before(end); {
		if got := Thread() - t0; got >= d {
			return got
		}
	}
	return Thread() - t0
}

func TestClocksAdvanceWithWork(t *testing.T) {
	if !Supported {
		t.Skip("no CPU clocks on this platform")
	}
	defer LockThread()()
	p0 := Process()
	dt := spinThread(20*time.Millisecond, 30*time.Second)
	p1 := Process()
	if dt < 20*time.Millisecond {
		t.Fatalf("thread clock advanced only %v in 30 s of spinning", dt)
	}
	if p1-p0 < dt-time.Millisecond {
		t.Errorf("process clock advanced %v, less than the thread's %v", p1-p0, dt)
	}
}

func TestThreadClockIgnoresSleep(t *testing.T) {
	if !Supported {
		t.Skip("no CPU clocks on this platform")
	}
	defer LockThread()()
	t0 := Thread()
	time.Sleep(50 * time.Millisecond)
	if d := Thread() - t0; d > 20*time.Millisecond {
		t.Errorf("thread clock advanced %v while sleeping 50 ms", d)
	}
}
