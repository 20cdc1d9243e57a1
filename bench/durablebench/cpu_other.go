//go:build !unix

package durablebench

import "time"

// processCPU is unknown on this platform.
func processCPU() (time.Duration, bool) { return 0, false }
