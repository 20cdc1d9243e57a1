//go:build !linux

package bench

import "time"

// threadCPU is unknown outside Linux.
func threadCPU() (time.Duration, bool) { return 0, false }
