package baselinetest

import (
	"slices"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// Churn is the insert and delete half of a rapid state machine over an
// index: it keeps the ids inserted and not yet deleted, so the packages'
// invariant tests share one way of growing and shrinking an index and
// differ only in the filters they draw and the invariants they check.
type Churn struct {
	live []match.ID
	next match.ID
}

// Insert inserts f under the next id; an error fails t.
func (c *Churn) Insert(t *rapid.T, x match.Index, f match.Filter) {
	if err := x.Insert(c.next, f); err != nil {
		t.Fatal(err)
	}
	c.live = append(c.live, c.next)
	c.next++
}

// Delete deletes a live id drawn by t (the action is skipped when there is
// none); an error fails t.
func (c *Churn) Delete(t *rapid.T, x match.Index) {
	if len(c.live) == 0 {
		t.Skip()
	}
	i := rapid.IntRange(0, len(c.live)-1).Draw(t, "i")
	if err := x.Delete(c.live[i]); err != nil {
		t.Fatal(err)
	}
	c.live = slices.Delete(c.live, i, i+1)
}

// Live returns the ids inserted and not yet deleted.
func (c *Churn) Live() []match.ID { return slices.Clone(c.live) }
