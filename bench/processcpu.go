package bench

import (
	"time"

	"github.com/sift-pubsub/sift/internal/cpuclock"
)

// ProcessCPU returns the user plus system CPU time of this process so
// far, and whether it is known on this platform.
func ProcessCPU() (time.Duration, bool) { return cpuclock.Process(), cpuclock.Supported }
