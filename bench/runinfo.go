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

// RunID names one run of one system in a side-by-side benchmark's
// results. Embedded in a result, its fields stand first in the result's
// JSON.
type RunID struct {
	System string `json:"system"`
	Run    int    `json:"run"`
	// LoadAverage is the machine's 1-minute load average as the run
	// started (-1: unknown).
	LoadAverage float64 `json:"load_average"`
}

// StartRun names run n of system and records the load as it starts.
func StartRun(system string, n int) RunID {
	return RunID{System: system, Run: n, LoadAverage: LoadAverage()}
}

// SystemName returns the name of the run's system.
func (id RunID) SystemName() string { return id.System }

// RunNumber returns the run's number (from 1).
func (id RunID) RunNumber() int { return id.Run }

// RunResult is the result of one run of one system: a type that embeds
// RunID.
type RunResult interface {
	SystemName() string
	RunNumber() int
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
