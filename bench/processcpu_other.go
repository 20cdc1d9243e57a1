//go:build !unix

package bench

import "time"

// ProcessCPU is unknown on this platform.
func ProcessCPU() (time.Duration, bool) { return 0, false }
