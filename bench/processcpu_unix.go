//go:build unix

package bench

import (
	"syscall"
	"time"
)

// ProcessCPU returns the user plus system CPU time of this process so
// far, and whether it is known.
func ProcessCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
