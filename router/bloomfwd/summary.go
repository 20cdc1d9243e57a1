package bloomfwd

import (
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
)

// Summary is an event's summary as the first router computes it.
type Summary struct {
	// Words are the summary's bits; they alias the Dict's scratch space
	// and are valid until the next Summarize.
	Words []uint64
	// Fill is the fraction of bits set.
	Fill float64
	// Exact is set when Fill exceeds bloom.SaturationThreshold: the
	// summary is too full to be useful, and routers match the event
	// exactly instead.
	Exact bool
}

// Summarize computes e's summary from the dictionary: the union of the
// bits of every term e satisfies.
func (d *Dict) Summarize(e match.Event) Summary {
	d.dict.Summary(e, d.summary)
	fill := bloom.Fill(d.summary)
	return Summary{Words: d.summary.Words(), Fill: fill, Exact: fill > bloom.SaturationThreshold}
}
