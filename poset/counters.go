package poset

import "fmt"

// Counters count the work a structure has done, so that the savings of the
// forest, the candidate index, RTO and FF are measured numbers. A covering
// test is one evaluation of the relation (Covers) by the structure.
type Counters struct {
	Inserts     uint64 // Add/Insert calls that succeeded (placements included)
	Deletes     uint64 // Delete calls that succeeded
	Matches     uint64 // Match and MatchInterfaces calls
	InsertTests uint64 // covering tests done by inserts
	DeleteTests uint64 // covering tests done by deletes
	MatchEvals  uint64 // filters evaluated against events by matches
}

// Counters returns the counters since the structure was created or the
// counters were last reset.
func (c *core) Counters() Counters { return c.ctr }

// ResetCounters sets every counter to zero.
func (c *core) ResetCounters() { c.ctr = Counters{} }

// Stats summarises the counters in one line; it implements
// match.StatsReporter.
func (c *core) Stats() string {
	k := c.ctr
	return fmt.Sprintf("%s: %d subscriptions, %d nodes, %d roots; inserts %d (%.1f covering tests each), deletes %d (%.1f each), matches %d (%.1f filters evaluated each)",
		c.name, c.subs, c.nodes, c.roots.len(),
		k.Inserts, per(k.InsertTests, k.Inserts), k.Deletes, per(k.DeleteTests, k.Deletes),
		k.Matches, per(k.MatchEvals, k.Matches))
}

func per(total, n uint64) float64 {
	if n == 0 {
		return 0
	}
	return float64(total) / float64(n)
}
