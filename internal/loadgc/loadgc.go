// Package loadgc paces the garbage collector while a program bulk-loads
// an index. During a load the live heap grows from nothing to the index's
// size, and what is allocated beside it (parsed filters, the builder's
// lists) is garbage soon after. At a fixed GOGC percentage the heap may
// grow that percentage beyond the live heap before a collection, so the
// peak resident memory grows with the index: at 2 GB of index, 25% is
// another 500 MB. The Pacer instead keeps the headroom at a bounded
// size: the larger of a floor and a small fraction of the live heap.
//
// It changes only the GC percentage (as debug.SetGCPercent), never the
// memory limit, so a load whose live heap outgrows every estimate still
// collects at a percentage of it instead of thrashing against a limit.
package loadgc

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
)

// Defaults of the headroom: the larger of MinHeadroom bytes and
// MinPercent percent of the live heap, and never more than the
// percentage in force before the load. MinPercent binds from 1.28 GB of
// live heap on; it is small because an index's heap is mostly arrays
// without pointers (bitsets, packed bounds), which a collection need not
// scan, so a cycle costs little however large the index.
const (
	MinHeadroom = 64 << 20
	MinPercent  = 5
)

// checkEvery is how many Steps pass between two reads of the live heap
// (a read costs about a microsecond; a load Steps once per subscription).
const checkEvery = 4096

const liveMetric = "/gc/heap/live:bytes"

// Pacer holds the GC percentage near the headroom it wants while a load
// runs. A nil *Pacer does nothing.
type Pacer struct {
	before  int // the percentage in force at Start, restored by Stop
	current int
	steps   int
	sample  []metrics.Sample
}

// Start begins pacing, unless GOGC is set in the environment (the user's
// choice stands) or the collector is off (GOGC=off): then it returns nil.
func Start() *Pacer {
	if os.Getenv("GOGC") != "" {
		return nil
	}
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	if before < 0 {
		return nil
	}
	p := &Pacer{before: before, current: before, sample: []metrics.Sample{{Name: liveMetric}}}
	p.adjust()
	return p
}

// Step is called once per item loaded; every checkEvery calls it reads
// the live heap and sets the percentage for the next collection.
func (p *Pacer) Step() {
	if p == nil {
		return
	}
	p.steps++
	if p.steps%checkEvery == 0 {
		p.adjust()
	}
}

// Stop restores the percentage in force at Start.
func (p *Pacer) Stop() {
	if p == nil {
		return
	}
	debug.SetGCPercent(p.before)
}

func (p *Pacer) adjust() {
	metrics.Read(p.sample)
	var live uint64
	if p.sample[0].Value.Kind() == metrics.KindUint64 {
		live = p.sample[0].Value.Uint64()
	}
	if pc := Percent(live, p.before); pc != p.current {
		debug.SetGCPercent(pc)
		p.current = pc
	}
}

// Percent returns the GC percentage that gives a live heap of live bytes
// a headroom of max(MinHeadroom, MinPercent% of live), capped at ceiling
// (the percentage the program runs with otherwise).
func Percent(live uint64, ceiling int) int {
	if live == 0 {
		return ceiling
	}
	pc := int((100*uint64(MinHeadroom) + live - 1) / live)
	return min(ceiling, max(MinPercent, pc))
}
