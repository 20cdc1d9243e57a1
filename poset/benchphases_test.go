package poset

import (
	"testing"

	"github.com/sift-pubsub/sift/internal/cpuclock"
)

// BenchPhases is the scaffolding of a benchmark whose op has two timed
// phases: it locks the thread and, once per b.Loop iteration, calls
// prepare, which sets one op up (untimed) and returns its phases; each
// phase is timed in thread CPU time and reported per item, n1 items as
// unit1 and n2 as unit2. Exported for the external test package.
func BenchPhases(b *testing.B, n1 int, unit1 string, n2 int, unit2 string, prepare func() (first, second func())) {
	b.Cleanup(cpuclock.LockThread())
	var ns1, ns2 float64
	for b.Loop() {
		first, second := prepare()
		start := cpuclock.Thread()
		first()
		mid := cpuclock.Thread()
		second()
		ns1 += float64(mid - start)
		ns2 += float64(cpuclock.Thread() - mid)
	}
	b.ReportMetric(ns1/float64(b.N)/float64(n1), unit1)
	b.ReportMetric(ns2/float64(b.N)/float64(n2), unit2)
}
