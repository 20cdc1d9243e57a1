package bench

import (
	"fmt"
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// Reference is Scan's answer on a sample of a workload's events: the
// ground truth every structure is checked against before it is timed.
type Reference struct {
	sample []int        // indexes of the sampled events, ascending
	want   [][]match.ID // sorted Scan results, one per sampled event
}

// NewReference runs Scan over filters (ids 0..n-1) on n evenly spaced
// events (all of them when n >= len(events) or n < 0).
func NewReference(filters []match.Filter, events []match.Event, n int) (Reference, error) {
	scan := match.NewScan()
	if err := match.Load(scan, sequentialIDs(len(filters)), filters); err != nil {
		return Reference{}, fmt.Errorf("reference scan: %w", err)
	}
	ref := Reference{sample: sampleIndexes(len(events), n)}
	for _, i := range ref.sample {
		ref.want = append(ref.want, match.SortIDs(scan.Match(events[i], nil)))
	}
	return ref, nil
}

// Len returns the number of sampled events.
func (r Reference) Len() int { return len(r.sample) }

// exacter is implemented by structures whose results equal Scan's only on
// some events (the expr baseline); the others are not checked.
type exacter interface {
	Exact(e match.Event) bool
}

// MismatchError reports a structure whose result differs from Scan's.
type MismatchError struct {
	Structure string
	Event     int    // index in the workload's events
	Text      string // the event as JSON
	Missing   []match.ID
	Extra     []match.ID
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s disagrees with scan on event %d %s: missing %s, extra %s",
		e.Structure, e.Event, e.Text, idList(e.Missing), idList(e.Extra))
}

// Check matches every sampled event with idx and compares with Scan. It
// returns how many events it checked (those an exacter accepts) and a
// *MismatchError on the first difference.
func (r Reference) Check(name string, idx match.Index, events []match.Event) (checked int, err error) {
	ex, partial := idx.(exacter)
	var got []match.ID
	for k, i := range r.sample {
		e := events[i]
		if partial && !ex.Exact(e) {
			continue
		}
		got = match.SortIDs(idx.Match(e, got[:0]))
		if !slices.Equal(got, r.want[k]) {
			missing, extra := diffIDs(r.want[k], got)
			return checked, &MismatchError{Structure: name, Event: i, Text: e.String(), Missing: missing, Extra: extra}
		}
		checked++
	}
	return checked, nil
}

// diffIDs returns the ids of want missing from got and those of got not in
// want (both sorted; got may hold duplicates, which count as extra).
func diffIDs(want, got []match.ID) (missing, extra []match.ID) {
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j == len(got) || i < len(want) && want[i] < got[j]:
			missing = append(missing, want[i])
			i++
		case i == len(want) || got[j] < want[i]:
			extra = append(extra, got[j])
			j++
		default:
			i++
			j++
		}
	}
	return missing, extra
}

// idList renders at most 10 ids.
func idList(ids []match.ID) string {
	if len(ids) <= 10 {
		return fmt.Sprint(ids)
	}
	return fmt.Sprintf("%v... (%d)", ids[:10], len(ids))
}

// sampleIndexes returns n evenly spaced indexes of 0..total-1, or all of
// them when n < 0 or n >= total.
func sampleIndexes(total, n int) []int {
	if n < 0 || n > total {
		n = total
	}
	out := make([]int, n)
	for k := range out {
		out[k] = k * total / n
	}
	return out
}

func sequentialIDs(n int) []match.ID {
	ids := make([]match.ID, n)
	for i := range ids {
		ids[i] = match.ID(i)
	}
	return ids
}
