package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/durable/replica"
	"github.com/sift-pubsub/sift/router"
)

// TestAdminChangeAsksAgainWhilePending: a change a leader refuses as
// pending (503) is asked again until it is taken, and one that stays
// refused is reported with the leader's reason once pendingRetry is over.
func TestAdminChangeAsksAgainWhilePending(t *testing.T) {
	defer func(r, p time.Duration) { pendingRetry, pendingPause = r, p }(pendingRetry, pendingPause)
	pendingRetry, pendingPause = 300*time.Millisecond, time.Millisecond
	change := replica.MemberChange{Op: replica.MemberAdd, Name: "d"}
	for _, tc := range []struct {
		name    string
		refuse  int32 // answers 503 this many times, then 200
		wantErr string
	}{
		{"taken after two refusals", 2, ""},
		{"always pending", 1 << 30, "a membership change is under way"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if asked.Add(1) <= tc.refuse {
					w.WriteHeader(http.StatusServiceUnavailable)
					_ = json.NewEncoder(w).Encode(router.AdminAnswer{Error: replica.ErrChangePending.Error()})
					return
				}
				_ = json.NewEncoder(w).Encode(router.AdminAnswer{Status: &router.DurableReplicaStatus{Name: "a"}})
			}))
			defer srv.Close()
			addr := strings.TrimPrefix(srv.URL, "http://")
			err := adminChange(context.Background(), io.Discard, io.Discard, []string{addr}, "p", change, 0)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("after %d asks: %v", asked.Load(), err)
			case tc.wantErr == "" && asked.Load() != tc.refuse+1:
				t.Fatalf("asked %d times, want %d", asked.Load(), tc.refuse+1)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
