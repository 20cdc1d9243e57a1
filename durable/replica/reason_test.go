package replica

import (
	"testing"

	"pgregory.net/rapid"
)

// TestLeaderInRoundTrip: the leader a not-leader reason names is read
// back; none is read from a reason naming none, or from other reasons.
func TestLeaderInRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.StringMatching(`[a-z0-9][a-z0-9._-]{0,20}`).Draw(t, "leader")
		pubend := rapid.StringMatching(`[ -~]{1,20}`).Draw(t, "pubend")
		router := rapid.StringMatching(`[a-z0-9._-]{1,20}`).Draw(t, "router")
		reason := NotLeaderReason(pubend, router, name)
		if !IsNotLeader(reason) {
			t.Fatalf("%q is not a not-leader reason", reason)
		}
		if got := LeaderIn(reason); got != name {
			t.Fatalf("LeaderIn(%q) = %q, want %q", reason, got, name)
		}
		if got := LeaderIn(NotLeaderReason(pubend, router, "")); got != "" {
			t.Fatalf("a reason naming no leader gave %q", got)
		}
	})
	for _, r := range []string{"", "store full (leader: a)", NotLeader + "x (leader: a b)", NotLeader + "(leader: )", NotLeader + "no mark"} {
		if got := LeaderIn(r); got != "" {
			t.Errorf("LeaderIn(%q) = %q, want none", r, got)
		}
	}
}
