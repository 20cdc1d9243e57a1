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
	// Fill is the fraction of bits set (of the partial summary, when
	// Exact).
	Fill float64
	// Exact is set when Fill exceeds bloom.SaturationThreshold: the
	// summary is too full to be useful, and routers match the event
	// exactly instead.
	Exact bool
}

// Summarize computes e's summary from the dictionary: the union of the
// bits of every term e satisfies. It stops as soon as the summary is past
// bloom.SaturationThreshold (Exact; Words and Fill are then those of a
// partial summary, already too full), so a wide event does not pay for
// every one of its terms only to be matched exactly.
func (d *Dict) Summarize(e match.Event) Summary {
	limit := int(bloom.SaturationThreshold * float64(64*len(d.summary.Words())))
	over := d.dict.SummaryUpTo(e, d.summary, limit)
	return Summary{Words: d.summary.Words(), Fill: bloom.Fill(d.summary), Exact: over}
}
