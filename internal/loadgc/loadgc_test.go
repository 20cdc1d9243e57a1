package loadgc

import (
	"runtime/debug"
	"testing"
)

func TestPercent(t *testing.T) {
	const mb = 1 << 20
	cases := []struct {
		live    uint64
		ceiling int
		want    int
	}{
		{0, 100, 100},       // nothing known yet: the program's own
		{16 * mb, 100, 100}, // a small heap: the ceiling binds
		{128 * mb, 100, 50}, // 64 MB of headroom
		{300 * mb, 100, 22}, // rounded up: at least 64 MB
		{640 * mb, 100, 10},
		{1280 * mb, 100, MinPercent}, // 64 MB is exactly 5%
		{2000 * mb, 100, MinPercent},
		{2000 * mb, 5, 5}, // a tighter GOGC of the program stays
	}
	for _, c := range cases {
		if got := Percent(c.live, c.ceiling); got != c.want {
			t.Errorf("Percent(%d MB, %d) = %d, want %d", c.live/mb, c.ceiling, got, c.want)
		}
		if pc := Percent(c.live, c.ceiling); c.live > 0 && pc < c.ceiling {
			if head := c.live * uint64(pc) / 100; head < MinHeadroom && pc > MinPercent {
				t.Errorf("Percent(%d MB) = %d: headroom %d below the floor", c.live/mb, pc, head)
			}
		}
	}
}

func TestStartStopRestores(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(77))
	p := Start()
	if p == nil {
		t.Fatal("Start returned nil without GOGC in the environment")
	}
	for range 3 * checkEvery {
		p.Step()
	}
	if got := debug.SetGCPercent(-1); got > 77 || got < MinPercent {
		t.Errorf("while loading: GC percent %d, want within [%d, 77]", got, MinPercent)
	} else {
		debug.SetGCPercent(got)
	}
	p.Stop()
	if got := debug.SetGCPercent(77); got != 77 {
		t.Errorf("after Stop: GC percent %d, want 77 restored", got)
	}
}

func TestUserChoiceStands(t *testing.T) {
	t.Setenv("GOGC", "50")
	if p := Start(); p != nil {
		t.Fatal("Start paced although GOGC is set")
	}
	var p *Pacer
	p.Step() // a nil Pacer is inert
	p.Stop()
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	if p := Start(); p != nil {
		t.Fatal("Start paced with the collector off")
	}
}
