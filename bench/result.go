package bench

// Status says whether a structure was measured at a point.
type Status string

// The statuses of a Result.
const (
	// StatusOK: every measure was taken.
	StatusOK Status = "ok"
	// StatusSkipped: the structure was too slow for the time budget at
	// this point; Reason says why and which measures exist.
	StatusSkipped Status = "skipped"
	// StatusError: the structure could not be built (for example the
	// expr baseline failing to compile a filter); Reason has the error.
	StatusError Status = "error"
)

// Result is the measures of one structure at one point of a sweep. Times
// are in nanoseconds per event unless named otherwise; a measure that was
// not taken is zero (see Status and Reason).
type Result struct {
	Structure string  `json:"structure"`
	Point     []Param `json:"point"` // the swept knobs' values
	Subs      int     `json:"subscriptions"`
	Events    int     `json:"events"`
	Status    Status  `json:"status"`
	Reason    string  `json:"reason,omitempty"`
	// Build names the binary that measured the result (CurrentBuild), so
	// a table resumed from stored points says which code each came from.
	Build string `json:"build,omitempty"`

	BuildSeconds  float64 `json:"build_seconds"`
	InsertsPerSec float64 `json:"inserts_per_second"`
	// HeapBytes is the live heap the structure adds once built, measured
	// with runtime.ReadMemStats after a GC before and after the build
	// (the workload's filters are already in memory and not counted).
	HeapBytes int64 `json:"heap_bytes"`

	// Runs is how many timed passes over all events were made; the match
	// times are the medians over runs of each run's mean, median and
	// 99th percentile of per-event times.
	Runs            int     `json:"runs"`
	MeanNs          float64 `json:"match_mean_ns"`
	MedianNs        float64 `json:"match_median_ns"`
	P99Ns           float64 `json:"match_p99_ns"`
	MatchesPerEvent float64 `json:"matches_per_event"`
	// CPUNs is the CPU time of the matching thread per event (median over
	// runs of each pass's total over its events): unlike the wall-clock
	// times it excludes waiting for a CPU on a loaded machine. Zero where
	// the platform cannot measure it.
	CPUNs float64 `json:"match_cpu_ns,omitempty"`

	// Bloom structures (match.RawMatcher) only: candidates per event
	// before the exact re-check, and the false-positive rate, the share of
	// non-matching subscriptions that were candidates.
	CandidatesPerEvent *float64 `json:"candidates_per_event,omitempty"`
	FalsePositiveRate  *float64 `json:"false_positive_rate,omitempty"`
	// Stats is the structure's own summary (match.StatsReporter).
	Stats string `json:"stats,omitempty"`

	// Checked is how many sampled events were compared with scan.
	Checked int `json:"checked_events"`
}

// Measured reports whether match times were taken.
func (r Result) Measured() bool { return r.Status == StatusOK }
