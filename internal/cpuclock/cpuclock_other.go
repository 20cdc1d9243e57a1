//go:build !unix

package cpuclock

import "time"

// Supported reports whether the clocks are read from the system.
const Supported = false

// Process is unknown on this platform: zero.
func Process() time.Duration { return 0 }

// Thread is unknown on this platform: zero.
func Thread() time.Duration { return 0 }
