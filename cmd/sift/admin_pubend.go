package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sift-pubsub/sift/durable/replica"
	"github.com/sift-pubsub/sift/router"
)

// sift admin pubend: membership changes of a replicated pubend, through
// a router's HTTP listener (siftd --metrics), which takes them from
// loopback addresses only.

func init() {
	admin := &cobra.Command{Use: "admin", Short: "Operate routers"}
	pubend := &cobra.Command{
		Use:   "pubend",
		Short: "Show and change the replicas of a replicated pubend",
		Long: `The replicas of a replicated pubend (siftd --pubend NAME --replicas r1,r2,r3)
change by Raft's joint consensus, at the leader. --http lists the routers' HTTP
addresses (their --metrics); each is asked in turn until one leads the pubend.
Membership changes are taken from loopback addresses only: run these commands on
a router's machine.

  add NAME        NAME may join; start its router with --replica-join (and a
                  --replicas list naming it): it joins as a learner and becomes
                  a voter once it caught up with the leader's log
  replace OLD NEW NEW takes OLD's place: NEW's router joins as a learner; once
                  it caught up, one change removes OLD and makes NEW a voter
                  (stop OLD's router afterwards)
  remove NAME     NAME stops being a replica (stop its router afterwards)
  status          every replica's view at the routers given

OLD or NAME may be the leader: it hands leadership to the most caught-up other
voter first, and the new leader finishes the change.`,
	}
	var httpAddrs string
	var wait time.Duration
	pubend.PersistentFlags().StringVar(&httpAddrs, "http", "", "routers' HTTP addresses HOST:PORT (siftd --metrics), comma-separated (required)")
	pubend.PersistentFlags().DurationVar(&wait, "wait", 30*time.Second, "wait this long for the change to be applied (0: do not wait)")
	change := func(op replica.MemberOp, args int, use string) *cobra.Command {
		return &cobra.Command{
			Use:  use,
			Args: cobra.ExactArgs(args),
			RunE: func(cmd *cobra.Command, a []string) error {
				c := replica.MemberChange{Op: op, Name: a[1]}
				if op == replica.MemberReplace {
					c.With = a[2]
				}
				addrs, err := splitAddrs(httpAddrs)
				if err != nil {
					return err
				}
				return adminChange(cmd.Context(), cmd.ErrOrStderr(), cmd.OutOrStdout(), addrs, a[0], c, wait)
			},
		}
	}
	status := &cobra.Command{
		Use:  "status PUBEND",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			addrs, err := splitAddrs(httpAddrs)
			if err != nil {
				return err
			}
			return adminStatus(cmd.Context(), cmd.OutOrStdout(), addrs, a[0])
		},
	}
	pubend.AddCommand(change(replica.MemberAdd, 2, "add PUBEND NAME"), change(replica.MemberReplace, 3, "replace PUBEND OLD NEW"),
		change(replica.MemberRemove, 2, "remove PUBEND NAME"), status)
	admin.AddCommand(pubend)
	rootCmd.AddCommand(admin)
}

func splitAddrs(s string) ([]string, error) {
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--http is required: the routers' HTTP addresses (siftd --metrics)")
	}
	return out, nil
}

var adminClient = &http.Client{Timeout: 10 * time.Second}

// adminChange asks each router in turn until one that leads the pubend
// takes the change, then waits for it to be applied.
func adminChange(ctx context.Context, progress, out io.Writer, addrs []string, pubend string, c replica.MemberChange, wait time.Duration) error {
	var why []string
	for _, addr := range addrs {
		ans, code, err := postChangeAgain(ctx, addr, pubend, c)
		if err != nil {
			why = append(why, fmt.Sprintf("%s: %v", addr, err))
			continue
		}
		switch code {
		case http.StatusOK:
			fmt.Fprintf(progress, "%s %s: proposed at %s (router %s, the leader)\n", c.Op, describe(c), addr, ans.Status.Name)
			if wait <= 0 {
				return nil
			}
			return waitChange(ctx, progress, out, addrs, pubend, c, wait)
		case http.StatusConflict, http.StatusNotFound:
			why = append(why, fmt.Sprintf("%s: %s", addr, ans.Error))
			continue
		default:
			return fmt.Errorf("%s %s refused by %s: %s", c.Op, describe(c), addr, ans.Error)
		}
	}
	return fmt.Errorf("no router given leads pubend %s: %s", pubend, strings.Join(why, "; "))
}

func describe(c replica.MemberChange) string {
	if c.Op == replica.MemberReplace {
		return c.Name + " by " + c.With
	}
	return c.Name
}

// pendingRetry bounds how long a change refused as pending (503) is asked
// again, and pendingPause the pause between the asks. A leader refuses
// every change while the previous one is under way, and also for a
// moment after each apply until raft hears of it (replica.ErrChangePending):
// a busy leader answers 503 now and then with nothing under way.
var pendingRetry, pendingPause = 3 * time.Second, 50 * time.Millisecond

// postChangeAgain posts the change, asking again while the router answers
// 503, for up to pendingRetry; the last answer is returned.
func postChangeAgain(ctx context.Context, addr, pubend string, c replica.MemberChange) (router.AdminAnswer, int, error) {
	end := time.Now().Add(pendingRetry)
	for {
		ans, code, err := postChange(ctx, addr, pubend, c)
		if err != nil || code != http.StatusServiceUnavailable || time.Now().After(end) {
			return ans, code, err
		}
		select {
		case <-ctx.Done():
			return ans, code, nil
		case <-time.After(pendingPause):
		}
	}
}

func postChange(ctx context.Context, addr, pubend string, c replica.MemberChange) (router.AdminAnswer, int, error) {
	body, _ := json.Marshal(map[string]string{"op": string(c.Op), "replica": c.Name, "with": c.With})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/admin/pubend/"+pubend, bytes.NewReader(body))
	if err != nil {
		return router.AdminAnswer{}, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := adminClient.Do(req)
	if err != nil {
		return router.AdminAnswer{}, 0, err
	}
	defer resp.Body.Close()
	var ans router.AdminAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&ans); err != nil {
		return router.AdminAnswer{}, 0, fmt.Errorf("answer (HTTP %d): %w", resp.StatusCode, err)
	}
	return ans, resp.StatusCode, nil
}

// waitChange polls the routers until the one that leads has the change
// applied: the new name (add, replace) is a voter, the name it replaces
// is not, or the removed name is neither in the roster nor a voter
// (remove). The leader may change meanwhile: removing or replacing the
// leader hands leadership to another replica first. An added or
// replacing replica becomes a learner when its router joins and a voter
// once it caught up: both are reported while waiting.
func waitChange(ctx context.Context, progress, out io.Writer, addrs []string, pubend string, c replica.MemberChange, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	name := c.Name
	if c.Op == replica.MemberReplace {
		name = c.With
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	last := time.Now()
	learning := false
	for {
		st, err := leaderStatus(ctx, addrs, pubend)
		if err == nil {
			inRoster, voter := slices.Contains(st.Roster, name), slices.Contains(st.Voters, name)
			switch {
			case c.Op == replica.MemberRemove && !inRoster && !voter:
				fmt.Fprintf(out, "removed %s from pubend %s: voters %s\n", name, pubend, names(st.Voters))
				return nil
			case c.Op != replica.MemberRemove && inRoster && voter && (c.Op == replica.MemberAdd || !slices.Contains(st.Voters, c.Name)):
				fmt.Fprintf(out, "%s is a voter of pubend %s: voters %s\n", name, pubend, names(st.Voters))
				return nil
			case c.Op != replica.MemberRemove && slices.Contains(st.Learners, name) && !learning:
				fmt.Fprintf(progress, "%s joined as a learner of pubend %s: it votes once it caught up\n", name, pubend)
				learning = true
			case c.Op != replica.MemberRemove && inRoster && !learning && time.Since(last) >= 2*time.Second:
				fmt.Fprintf(progress, "roster of %s: %s; waiting for %s's router to join (siftd --pubend %s --replicas %s --replica-join)\n",
					pubend, strings.Join(st.Roster, ","), name, pubend, strings.Join(st.Roster, ","))
				last = time.Now()
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("%s %s: proposed, not seen applied within %v: %w", c.Op, describe(c), wait, err)
			}
			return fmt.Errorf("%s %s: proposed, not applied within %v (roster %s, voters %s)", c.Op, describe(c), wait,
				strings.Join(st.Roster, ","), strings.Join(st.Voters, ","))
		case <-tick.C:
		}
	}
}

// leaderStatus returns the view of the first router of addrs whose
// replica leads pubend, or else of the first that answers.
func leaderStatus(ctx context.Context, addrs []string, pubend string) (router.DurableReplicaStatus, error) {
	var first router.DurableReplicaStatus
	var firstErr error
	found := false
	for _, addr := range addrs {
		st, err := replicaStatus(ctx, addr, pubend)
		switch {
		case err == nil && st.Leading:
			return st, nil
		case err == nil && !found:
			first, found = st, true
		case err != nil && firstErr == nil:
			firstErr = err
		}
	}
	if found {
		return first, nil
	}
	return router.DurableReplicaStatus{}, firstErr
}

// replicaStatus reads a router's replica of pubend from /debug/durable.
func replicaStatus(ctx context.Context, addr, pubend string) (router.DurableReplicaStatus, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/durable", nil)
	if err != nil {
		return router.DurableReplicaStatus{}, err
	}
	resp, err := adminClient.Do(req)
	if err != nil {
		return router.DurableReplicaStatus{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return router.DurableReplicaStatus{}, fmt.Errorf("%s: /debug/durable: HTTP %d", addr, resp.StatusCode)
	}
	var st router.DurableStatus
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return router.DurableReplicaStatus{}, fmt.Errorf("%s: /debug/durable: %w", addr, err)
	}
	for _, r := range st.Replicas {
		if r.Pubend == pubend {
			return r, nil
		}
	}
	return router.DurableReplicaStatus{}, fmt.Errorf("%s (router %s) holds no replica of pubend %s", addr, st.Router, pubend)
}

// adminStatus prints each router's view of the pubend's replicas.
func adminStatus(ctx context.Context, out io.Writer, addrs []string, pubend string) error {
	fmt.Fprintf(out, "%-22s %-10s %-14s %-8s %-10s %6s %8s %8s  %-20s %-10s %s\n", "http", "replica", "state", "leading", "leader", "term", "commit", "applied", "voters", "learners", "roster")
	failed := 0
	for _, addr := range addrs {
		st, err := replicaStatus(ctx, addr, pubend)
		if err != nil {
			fmt.Fprintf(out, "%-22s %v\n", addr, err)
			failed++
			continue
		}
		learners := names(st.Learners)
		if learners == "" {
			learners = "-"
		}
		fmt.Fprintf(out, "%-22s %-10s %-14s %-8v %-10s %6d %8d %8d  %-20s %-10s %s\n", addr, st.Name, st.State, st.Leading, st.Leader,
			st.Term, st.Commit, st.Applied, names(st.Voters), learners, names(st.Roster))
	}
	if failed == len(addrs) {
		return fmt.Errorf("no router answered for pubend %s", pubend)
	}
	return nil
}

// names joins replica names, sorted, with commas.
func names(ns []string) string { return strings.Join(slices.Sorted(slices.Values(ns)), ",") }
