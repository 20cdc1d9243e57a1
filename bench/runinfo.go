package bench

import (
	"fmt"
	"os"
	"time"
)

// RunInfo is the header of a side-by-side system benchmark's report (sift
// bench net, sift bench durable): what is needed to judge and repeat it.
// Embedded in a report, its fields stand first in the report's JSON.
type RunInfo struct {
	Command string    `json:"command"`
	Machine Machine   `json:"machine"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	// LoadStart and LoadEnd are the 1-minute load averages when the
	// benchmark started and ended (-1: unknown); compare them with
	// Machine.Cores.
	LoadStart float64 `json:"load_average_start"`
	LoadEnd   float64 `json:"load_average_end"`
}

// StartRunInfo records the command, the machine, the time and the load as
// a benchmark starts.
func StartRunInfo(command string) RunInfo {
	return RunInfo{Command: command, Machine: CurrentMachine(), Started: time.Now().UTC(), LoadStart: LoadAverage()}
}

// Finish records how long the benchmark took and the load as it ended.
func (ri *RunInfo) Finish() {
	ri.Seconds = time.Since(ri.Started).Seconds()
	ri.LoadEnd = LoadAverage()
}

// WorkDir returns dir, or when dir is empty a new temporary folder named
// after prefix together with a cleanup that removes it (a no-op for a
// given dir).
func WorkDir(dir, prefix string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, fmt.Errorf("work folder: %w", err)
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}
