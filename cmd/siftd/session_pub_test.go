package main

import (
	"context"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
)

// TestSessionPublishReplay: a client.Session publishing 100,000 events
// through r1 of the chain r1 - r2, with `sift sub` at r2. r1 is stopped
// (SIGTERM) mid-stream: the batches it had not acknowledged are published
// again on the Session's next connection, to r2 (its second address),
// before anything published later. Every event reaches the subscriber
// (nothing accepted is lost in r1's drain, nothing unacknowledged is lost
// by the Session), the Session counts each event accepted once, and an
// event is delivered twice only if it was replayed (an acknowledgement
// the old router sent but the client never read). A subscription made
// while the Session reconnects is installed on the next connection.
func TestSessionPublishReplay(t *testing.T) {
	t.Parallel()
	const n = 100_000
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := newCluster(t, ctx, []string{"--drain-timeout", "10s"})
	r1 := c.start("r1")
	r2 := c.start("r2", r1)
	c.waitLinks(r2, r1)

	seen := make(chan int, 4*n)
	seqRE := regexp.MustCompile(`"seq":(\d+)`)
	sub := startLogProc(t, ctx, "sift sub at r2", func(l string) {
		if m := seqRE.FindStringSubmatch(l); m != nil {
			v, _ := strconv.Atoi(m[1])
			seen <- v
		}
	}, "sift", "sub", "--router", r2.addr, "--certs", c.certDir, "seq exists")
	sub.waitLine(t, ctx, subReady)

	cl, err := certs.Load(c.certDir, certs.Client)
	if err != nil {
		t.Fatal(err)
	}
	lost := make(chan string, 4)
	sess, err := client.DialSession(ctx, []string{r1.addr, r2.addr}, client.Options{TLS: cl.ClientConfig(), Name: "replay-pub"},
		client.SessionOptions{MinBackoff: 50 * time.Millisecond, OnLost: func(addr string, err error) { lost <- addr + ": " + err.Error() }})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	done := make(chan error, 1)
	go func() {
		for i := range n {
			ev, err := match.ParseEventJSON([]byte(`{"seq":` + strconv.Itoa(i) + `}`))
			if err != nil {
				done <- err
				return
			}
			if err := sess.Publish(ctx, ev); err != nil {
				done <- err
				return
			}
		}
		done <- sess.Flush(ctx)
	}()

	got := map[int]int{}
	receive := func() {
		t.Helper()
		select {
		case v := <-seen:
			got[v]++
		case <-ctx.Done():
			t.Fatalf("the subscriber has %d of %d events; missing %s; replayed %d accepted %d", len(got), n, missingRanges(got, n), sess.Replayed(), sess.Accepted())
		}
	}
	for len(got) < 5000 {
		receive()
	}
	if err := r1.p.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("r1 after SIGTERM: %v\n%s", err, r1.p.log())
	}
	select {
	case why := <-lost:
		t.Logf("session lost %s", why)
	case <-ctx.Done():
		t.Fatal("the session never noticed r1 stopping")
	}
	// A subscription made while the session reconnects waits for the
	// next connection instead of failing with the old one's error.
	own, err := sess.Subscribe(ctx, "last exists")
	if err != nil {
		t.Fatalf("subscribe while reconnecting: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("publish: %v", err)
	}
	for len(got) < n {
		receive()
	}
	dups := 0
	for _, k := range got {
		dups += k - 1
	}
	for drained := false; !drained; { // late duplicates still in the pipe
		select {
		case v := <-seen:
			got[v]++
			dups++
		case <-time.After(300 * time.Millisecond):
			drained = true
		}
	}
	last, _ := match.ParseEventJSON([]byte(`{"last": true}`))
	if err := sess.Publish(ctx, last); err != nil {
		t.Fatal(err)
	}
	if err := sess.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if e, err := own.Next(ctx); err != nil || !last.Equal(e) {
		t.Fatalf("the subscription made while reconnecting got %v, %v; want %v", e, err, last)
	}
	acc, replayed := sess.Accepted()-1, sess.Replayed()
	t.Logf("%d events: every one delivered; the session replayed %d after r1 stopped, %d delivered twice; accepted %d", n, replayed, dups, acc)
	if acc != n {
		t.Errorf("Session.Accepted() = %d, want %d", acc, n)
	}
	if replayed == 0 {
		t.Errorf("nothing was replayed: r1 stopped with no batch unacknowledged, so this run did not test the replay")
	}
	if uint64(dups) > replayed {
		t.Errorf("%d events delivered twice, but only %d were published twice", dups, replayed)
	}
	sub.stop(syscall.SIGINT)
	c.nodes = c.nodes[1:] // r1 is stopped
	c.stopAll()
}

func missingRanges(got map[int]int, n int) string {
	out := ""
	for i := 0; i < n; i++ {
		if got[i] > 0 {
			continue
		}
		j := i
		for j+1 < n && got[j+1] == 0 {
			j++
		}
		out += strconv.Itoa(i) + "-" + strconv.Itoa(j) + " "
		i = j
	}
	return out
}
