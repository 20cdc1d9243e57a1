package cpuclock

import (
	"testing"
	"time"
)

// spin burns about d of CPU on the calling thread.
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

func TestClocksAdvanceWithWork(t *testing.T) {
	if !Supported {
		t.Skip("no CPU clocks on this platform")
	}
	defer LockThread()()
	p0, t0 := Process(), Thread()
	spin(20 * time.Millisecond)
	p1, t1 := Process(), Thread()
	if t1-t0 < 5*time.Millisecond {
		t.Errorf("thread clock advanced %v over 20 ms of spinning", t1-t0)
	}
	if p1-p0 < t1-t0-time.Millisecond {
		t.Errorf("process clock advanced %v, less than the thread's %v", p1-p0, t1-t0)
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
