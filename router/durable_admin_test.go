package router_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/router"
)

// TestAdminPubendRefusals: POST /admin/pubend/{pubend} refuses, with a
// status code and a reason, a client off loopback, a malformed, oversized
// or unknown-field body, a pubend not replicated here, a router that does
// not lead (naming the leader) and a change the roster refuses; none of
// them changes the roster.
func TestAdminPubendRefusals(t *testing.T) {
	rc := newReplicaChain(t)
	ch := rc.durableChain
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	leader, follower := rc.preferredLeader(t), "b"
	post := func(at, remote, path, body string) (int, router.AdminAnswer) {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.RemoteAddr = remote
		w := httptest.NewRecorder()
		ch.envs[at].Router.Handler().ServeHTTP(w, req)
		var ans router.AdminAnswer
		if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil {
			t.Fatalf("%s %s: answer %q: %v", path, body, w.Body.String(), err)
		}
		return w.Code, ans
	}
	const lo = "127.0.0.1:40000"
	for _, tc := range []struct {
		name, at, remote, path, body string
		code                         int
		want                         string
	}{
		{"off loopback", leader, "192.0.2.1:40000", "/admin/pubend/p", `{"op":"add","replica":"d"}`, http.StatusForbidden, "loopback"},
		{"malformed", leader, lo, "/admin/pubend/p", `{"op":`, http.StatusBadRequest, "request body"},
		{"unknown field", leader, lo, "/admin/pubend/p", `{"op":"add","replica":"d","force":true}`, http.StatusBadRequest, "unknown field"},
		{"oversized", leader, lo, "/admin/pubend/p", `{"op":"add","replica":"` + strings.Repeat("x", 5000) + `"}`, http.StatusBadRequest, "too large"},
		{"not replicated", leader, lo, "/admin/pubend/other", `{"op":"add","replica":"d"}`, http.StatusNotFound, "no replica of this pubend here"},
		{"not the leader", follower, lo, "/admin/pubend/p", `{"op":"add","replica":"d"}`, http.StatusConflict, "does not lead pubend p (leader: " + leader + ")"},
		{"unknown op", leader, lo, "/admin/pubend/p", `{"op":"grow","replica":"d"}`, http.StatusBadRequest, "unknown membership change"},
		{"unknown replica", leader, lo, "/admin/pubend/p", `{"op":"remove","replica":"zz"}`, http.StatusBadRequest, `unknown replica "zz"`},
		{"name too long", leader, lo, "/admin/pubend/p", `{"op":"add","replica":"` + strings.Repeat("y", 300) + `"}`, http.StatusBadRequest, "a replica name of 1-"},
	} {
		code, ans := post(tc.at, tc.remote, tc.path, tc.body)
		// A busy leader refuses any change for a moment after each apply,
		// until raft hears of it (replica.ErrChangePending, 503): again.
		for end := time.Now().Add(5 * time.Second); code == http.StatusServiceUnavailable && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
			code, ans = post(tc.at, tc.remote, tc.path, tc.body)
		}
		if code != tc.code || !strings.Contains(ans.Error, tc.want) {
			t.Errorf("%s: HTTP %d %q, want %d and an error containing %q", tc.name, code, ans.Error, tc.code, tc.want)
		}
		if tc.name == "not the leader" && ans.Leader != leader {
			t.Errorf("not the leader: the answer names %q as leader, want %s", ans.Leader, leader)
		}
	}
	for _, n := range []string{"a", "b", "c"} {
		st, err := ch.envs[n].Router.Durable(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Replicas) != 1 || !slices.Equal(st.Replicas[0].Roster, []string{"a", "b", "c"}) {
			t.Fatalf("router %s after the refusals: replicas %+v", n, st.Replicas)
		}
	}
}
