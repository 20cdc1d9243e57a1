package replica

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestNotLeaderReason: a not-leader reason is one (IsNotLeader) and names
// the leader, or says none is known; other reasons are not.
func TestNotLeaderReason(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.StringMatching(`[a-z0-9][a-z0-9._-]{0,20}`).Draw(t, "leader")
		pubend := rapid.StringMatching(`[ -~]{1,20}`).Draw(t, "pubend")
		router := rapid.StringMatching(`[a-z0-9._-]{1,20}`).Draw(t, "router")
		reason := NotLeaderReason(pubend, router, name)
		if !IsNotLeader(reason) || !strings.HasSuffix(reason, "(leader: "+name+")") {
			t.Fatalf("reason %q", reason)
		}
		if none := NotLeaderReason(pubend, router, ""); !IsNotLeader(none) || !strings.HasSuffix(none, "(leader: unknown yet)") {
			t.Fatalf("reason naming none %q", none)
		}
	})
	for _, r := range []string{"", "store full (leader: a)", "not leading"} {
		if IsNotLeader(r) {
			t.Errorf("IsNotLeader(%q)", r)
		}
	}
}
