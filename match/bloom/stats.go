package bloom

import "fmt"

// SaturationThreshold is the summary fill above which a summary is too
// full to be useful; routers then mark the event for exact matching
// (docs/protocol.md, "Bloom forwarding").
const SaturationThreshold = 0.5

// Stats counts what an Index did, for `sift match` and the sweep.
type Stats struct {
	// Events is the number of events matched.
	Events int64
	// Candidates is the number of subscriptions the Bloom test accepted.
	Candidates int64
	// Exact is the number of candidates the exact re-check confirmed.
	Exact int64
	// Forwarded counts events with at least one candidate (the events a
	// router holding these subscriptions for one neighbour would forward).
	Forwarded int64
	// ForwardedFalse counts forwarded events with no exact match.
	ForwardedFalse int64
	// Saturated counts summaries filled above SaturationThreshold.
	Saturated int64
	// SaturatedCandidates and SaturatedExact are the candidates and exact
	// matches of the saturated events alone: a router that falls back to
	// exact matching for those events (docs/protocol.md) avoids their false
	// positives.
	SaturatedCandidates, SaturatedExact int64
	// FillSum is the sum of summary fills, for the mean.
	FillSum float64
}

// FPRate is the share of candidates that are false positives.
func (s Stats) FPRate() float64 { return ratio(s.Candidates-s.Exact, s.Candidates) }

// UnsaturatedFPRate is the share of false positives among the candidates
// of events whose summary is not saturated: the Bloom false-positive rate
// of a router that matches saturated events exactly.
func (s Stats) UnsaturatedFPRate() float64 {
	c := s.Candidates - s.SaturatedCandidates
	return ratio(c-(s.Exact-s.SaturatedExact), c)
}

// ForwardedFPRate is the share of forwarded events with no exact match.
func (s Stats) ForwardedFPRate() float64 { return ratio(s.ForwardedFalse, s.Forwarded) }

// MeanFill is the mean summary fill.
func (s Stats) MeanFill() float64 {
	if s.Events == 0 {
		return 0
	}
	return s.FillSum / float64(s.Events)
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// String is one summary line.
func (s Stats) String() string {
	return fmt.Sprintf("events %d, candidates %d, exact matches %d, false positives %d (%.2f%% of candidates), "+
		"forwarded events %d of which false %d (%.2f%%), mean summary fill %.1f%%, saturated summaries %d "+
		"(without them: %.2f%% of candidates false)",
		s.Events, s.Candidates, s.Exact, s.Candidates-s.Exact, 100*s.FPRate(),
		s.Forwarded, s.ForwardedFalse, 100*s.ForwardedFPRate(), 100*s.MeanFill(), s.Saturated,
		100*s.UnsaturatedFPRate())
}
