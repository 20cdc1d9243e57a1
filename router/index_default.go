package router

import "runtime"

// DefaultIndex returns the match index a router uses unless configured:
// on more than one core "fast-parallel", which matches like "fast" on the
// loop's goroutine until it holds match.ParallelSplitAt subscriptions and
// from then on matches each event on every core (its subscriptions spread
// over one shard per core); on one core "fast".
func DefaultIndex() string {
	if runtime.GOMAXPROCS(0) > 1 {
		return "fast-parallel"
	}
	return "fast"
}
