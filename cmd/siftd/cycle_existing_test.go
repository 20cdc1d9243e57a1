package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCycleRefusalKeepsExistingLinks is the scenario of issue 20: the
// chain r1 - r2 - r3 is up, and r4 starts with --peer r1 and --peer r3, so
// it dials both at once and the two new links race into the cycle
// r1 - r2 - r3 - r4. Whichever side notices the cycle (the accepting
// router at its hello, r4 at the answer, or any router from a later Reach),
// only one of the two new links may go: the newest link of the cycle, by
// the epoch both of its ends agree on. The old links r1-r2 and r2-r3 must
// never go down. Each of the tries starts r4 again (a new incarnation, new
// epochs), waits until it is linked to exactly one of r1 and r3 and the
// mesh has settled to the tree, then stops it; no router ever logs an old
// link going down, and every router's reachable sets stay a tree.
func TestCycleRefusalKeepsExistingLinks(t *testing.T) {
	t.Parallel()
	const tries = 40
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	c := newCluster(t, ctx, nil)
	r1 := c.start("r1")
	r2 := c.start("r2", r1)
	c.waitLinks(r2, r1)
	r3 := c.start("r3", r2)
	c.waitLinks(r3, r2)
	settled := func(want map[*node][]string) func() error {
		return func() error {
			for n, peers := range want {
				r, err := n.routes()
				if err != nil {
					return err
				}
				if got := r.peers(); !slices.Equal(got, peers) {
					return fmt.Errorf("%s is linked to %v, want %v", n.name, got, peers)
				}
				reach := []string{n.name}
				for _, l := range r.Links {
					reach = append(reach, l.Reach...)
				}
				slices.Sort(reach)
				if !slices.Equal(reach, slices.Compact(slices.Clone(reach))) {
					return fmt.Errorf("%s reaches a router through two links: %v", n.name, r.Links)
				}
				if len(reach) != len(want) {
					return fmt.Errorf("%s reaches %v, want all %d routers", n.name, reach, len(want))
				}
			}
			return nil
		}
	}
	eventually(t, ctx, "chain r1 - r2 - r3", settled(map[*node][]string{r1: {"r2"}, r2: {"r1", "r3"}, r3: {"r2"}}))
	oldDown := regexp.MustCompile(`msg="link down".* link=(r1|r2|r3)\b`)
	checkOld := func(try int) {
		t.Helper()
		for _, n := range []*node{r1, r2, r3} {
			for _, line := range strings.Split(n.p.log(), "\n") {
				if oldDown.MatchString(line) {
					t.Fatalf("try %d: an existing link went down at %s: %s", try, n.name, line)
				}
			}
		}
	}
	r4 := &node{name: "r4", listen: "127.0.0.1:0", peers: []string{r1.addr, r3.addr}}
	wins := map[string]int{}
	raced := 0
	for try := range tries {
		if try == 0 {
			c.startNode(r4)
		} else {
			c.run(r4)
		}
		var via string
		eventually(t, ctx, fmt.Sprintf("try %d: r4 linked to one of r1 and r3", try), func() error {
			r, err := r4.routes()
			if err != nil {
				return err
			}
			if p := r.peers(); len(p) != 1 {
				return fmt.Errorf("r4 is linked to %v", p)
			}
			via = r.peers()[0]
			want := map[*node][]string{r1: {"r2"}, r2: {"r1", "r3"}, r3: {"r2"}, r4: {via}}
			if via == "r1" {
				want[r1] = []string{"r2", "r4"}
			} else {
				want[r3] = []string{"r2", "r4"}
			}
			return settled(want)()
		})
		wins[via]++
		checkOld(try)
		if strings.Contains(r4.p.log(), "newest of that cycle; closing it") {
			raced++ // both new links came up, and the newer was closed by the epoch rule
		}
		if err := r4.p.stop(syscall.SIGTERM); err != nil {
			t.Fatalf("try %d: r4 after SIGTERM: %v\n%s", try, err, r4.p.log())
		}
		eventually(t, ctx, fmt.Sprintf("try %d: r4 gone", try), settled(map[*node][]string{r1: {"r2"}, r2: {"r1", "r3"}, r3: {"r2"}}))
		checkOld(try)
	}
	closedAtOld := strings.Count(r1.p.log()+r3.p.log(), "newest of that cycle; closing it")
	t.Logf("%d tries: r4 stayed linked to r1 %d times, to r3 %d times; in %d both new links came up and r4 closed the newer (r1 and r3 closed theirs %d times); r1-r2 and r2-r3 never went down",
		tries, wins["r1"], wins["r3"], raced, closedAtOld)
	r4.p = nil // stopped already
	c.nodes = slices.DeleteFunc(c.nodes, func(n *node) bool { return n == r4 })
	c.stopAll()
}
