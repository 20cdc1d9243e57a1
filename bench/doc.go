// Package bench is Sift's macro benchmark harness: it runs every matching
// structure (each index registered with match, plus the expr-lang
// baseline) on the same seeded workload and reports trustworthy numbers
// and plots. `sift bench match` is a thin command over it; workload
// generation lives in the subpackage workload, the one generator of the
// project.
//
// # What a run does
//
// For every point of the sweep grid (Spec plus Sweeps), the harness
// generates or reads the workload once, computes Scan's answers on a
// sample of events, then for each structure: builds it (bulk when the
// index supports it), measures the live heap it adds, checks its results
// against Scan on the sample, warms up, and times as many passes over all
// events as the budget allows (up to Options.Runs), reporting the median
// over passes of the mean, median and 99th percentile per-event time.
// Bloom structures also report candidates per event and their
// false-positive rate.
//
// # Promises
//
// A structure whose results differ from Scan's on a checked event fails
// the whole run with a *MismatchError: numbers are only reported for
// correct structures. A structure too slow for the time budget at a point
// is kept in the results with StatusSkipped and the reason, never
// silently dropped. The report records the machine and the command.
//
// # Caveats
//
// Times are wall-clock on a possibly shared machine; repeat runs and
// compare medians. Heap is measured after a GC before and after the
// build, so it counts what the structure allocates beyond the filters the
// workload already holds (a structure that shares the filters' storage is
// charged only for its own). The expr baseline compares ints with floats
// as float64; events where that could differ from Sift's exact semantics
// (ints beyond ±2^53) are not checked for expr.
package bench
