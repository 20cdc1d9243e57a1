package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// This file publishes tagged events through `sift pub` and collects what
// `sift sub` processes print, then checks each subscriber strictly against
// match.Scan: every event it got was published, matches its filter, and
// arrives at most once and in order per publisher; and the phases that
// must be complete for it are.

// Attributes added to every published event so a subscriber's output can
// be traced back: the publisher's name and the event's index in that
// publisher's sequence.
const (
	pubAttr = "zz_pub"
	seqAttr = "zz_seq"
)

// publisher is one `sift pub` identity at a router; each publish call is
// a new process, publishing after everything published before.
type publisher struct {
	name   string
	at     *node
	events []match.Event // every event published, tagged; seqAttr = index
	phases []string      // phases[i]: the phase events[i] was published in
}

// tag returns e with the publisher's name and seq added.
func tag(e match.Event, pub string, seq int) match.Event {
	attrs := make([]match.Attr, 0, e.Len()+2)
	for i := range e.Len() {
		attrs = append(attrs, e.At(i))
	}
	attrs = append(attrs, match.Attr{Name: pubAttr, Value: match.Str(pub)},
		match.Attr{Name: seqAttr, Value: match.Int(int64(seq))})
	return match.MustEvent(attrs...)
}

// publish tags evs, records them as published in phase, and publishes
// them with one `sift pub` process at p's router. Safe to run for
// different publishers at once.
func (p *publisher) publish(ctx context.Context, c *cluster, phase string, evs []match.Event) error {
	tagged := make([]match.Event, len(evs))
	for i, e := range evs {
		tagged[i] = tag(e, p.name, len(p.events)+i)
	}
	var buf bytes.Buffer
	if err := match.WriteEvents(&buf, tagged); err != nil {
		return err
	}
	file := filepath.Join(c.dir, fmt.Sprintf("%s-%s.jsonl", p.name, phase))
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		return err
	}
	p.events = append(p.events, tagged...)
	for range tagged {
		p.phases = append(p.phases, phase)
	}
	out, err := runIn(ctx, p.at, "sift", "pub", "--router", p.at.clientAddr, "--certs", c.certDir, file)
	if want := fmt.Sprintf("published %d events\n", len(evs)); err != nil || out != want {
		return fmt.Errorf("%s at %s, %s: %v\n%s", p.name, p.at.name, phase, err, out)
	}
	return nil
}

// publishAll publishes one batch per publisher at once, and waits for all.
func publishAll(t *testing.T, ctx context.Context, c *cluster, phase string, batches map[*publisher][]match.Event) {
	t.Helper()
	errs := make(chan error, len(batches))
	for p, evs := range batches {
		go func() { errs <- p.publish(ctx, c, phase, evs) }()
	}
	var all []error
	for range batches {
		all = append(all, <-errs)
	}
	if err := errors.Join(all...); err != nil {
		t.Fatal(err)
	}
}

// runIn runs binary (built by TestMain) in n's namespace and returns its
// stdout, or stdout and stderr with the error.
func runIn(ctx context.Context, n *node, binary string, args ...string) (string, error) {
	prog, argv := n.command(binary, args...)
	if !filepath.IsAbs(prog) {
		prog = filepath.Join(bin, prog)
	}
	cmd := exec.CommandContext(ctx, prog, argv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String() + errb.String(), err
	}
	return out.String(), nil
}

// subscriber is a `sift sub` process at a router, whose output is parsed
// as it arrives.
type subscriber struct {
	name   string
	at     *node
	filter match.Filter
	p      *logProc

	mu     sync.Mutex
	got    []match.Event
	bad    []string       // output lines that are not an event
	last   map[string]int // per publisher, the highest seq received
	notify chan struct{}  // closed and replaced on every line
}

// subscribe starts `sift sub` at n with filter f and extra flags, and
// waits for its "ready" (the subscription installed wherever it must be).
func (c *cluster) subscribe(name string, n *node, f match.Filter, extra ...string) *subscriber {
	c.t.Helper()
	s := &subscriber{name: name, at: n, filter: f, last: map[string]int{}, notify: make(chan struct{})}
	args := append([]string{"sub", "--router", n.clientAddr, "--certs", c.certDir, "--timeout", "10m"}, extra...)
	prog, argv := n.command("sift", append(args, f.String())...)
	s.p = startLogProc(c.t, c.ctx, fmt.Sprintf("sift sub %s at %s", name, n.name), s.add, prog, argv...)
	s.p.waitLine(c.t, c.ctx, subReady)
	return s
}

func (s *subscriber) add(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		close(s.notify)
		s.notify = make(chan struct{})
	}()
	es, err := parseSubOutput(line)
	if err != nil || len(es) != 1 {
		s.bad = append(s.bad, line)
		return
	}
	e := es[0]
	s.got = append(s.got, e)
	if pub, seq, ok := eventTag(e); ok {
		if prev, seen := s.last[pub]; !seen || seq > prev {
			s.last[pub] = seq
		}
	}
}

// eventTag returns the publisher and seq an event was tagged with.
func eventTag(e match.Event) (string, int, bool) {
	pub, ok1 := e.Get(pubAttr)
	seq, ok2 := e.Get(seqAttr)
	if !ok1 || !ok2 || pub.Kind() != match.KindString || seq.Kind() != match.KindInt {
		return "", 0, false
	}
	return pub.AsString(), int(seq.AsInt()), true
}

// waitSeqs waits until, for every publisher in want, s has received an
// event with seq at least want[pub] (with per-publisher order, the last
// one it expects).
func (s *subscriber) waitSeqs(ctx context.Context, want map[string]int) error {
	for {
		s.mu.Lock()
		var missing []string
		for pub, seq := range want {
			if got, ok := s.last[pub]; !ok || got < seq {
				missing = append(missing, fmt.Sprintf("%s#%d", pub, seq))
			}
		}
		changed := s.notify
		s.mu.Unlock()
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-s.p.done:
			return fmt.Errorf("%s exited (%v) waiting for %v:\n%s", s.p.name, s.p.err, missing, s.p.log())
		case <-ctx.Done():
			return fmt.Errorf("%s: waiting for %v: %w", s.p.name, missing, ctx.Err())
		}
	}
}

// events returns what s received so far.
func (s *subscriber) events() ([]match.Event, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]match.Event(nil), s.got...), append([]string(nil), s.bad...)
}

// mustComplete tells whether a subscriber must have every matching event
// a publisher published in a phase (otherwise it may miss some).
type mustComplete func(s *subscriber, p *publisher, phase string) bool

// expected returns, per publisher, the seqs of the events s's filter
// matches (by match.Scan) among those published in phases that must be
// complete for it.
func expected(s *subscriber, pubs []*publisher, complete mustComplete) map[string][]int {
	scan := match.NewScan()
	scan.Insert(1, s.filter)
	out := map[string][]int{}
	for _, p := range pubs {
		for i, e := range p.events {
			if complete(s, p, p.phases[i]) && len(scan.Match(e, nil)) > 0 {
				out[p.name] = append(out[p.name], i)
			}
		}
	}
	return out
}

// lastSeqs returns the last seq of each publisher in exp.
func lastSeqs(exp map[string][]int) map[string]int {
	out := map[string]int{}
	for pub, seqs := range exp {
		out[pub] = seqs[len(seqs)-1]
	}
	return out
}

// waitPhase waits until every subscriber has received the last event it
// must get so far (per complete), for every publisher.
func waitPhase(t *testing.T, ctx context.Context, subs []*subscriber, pubs []*publisher, complete mustComplete) {
	t.Helper()
	for _, s := range subs {
		if err := s.waitSeqs(ctx, lastSeqs(expected(s, pubs, complete))); err != nil {
			t.Fatal(err)
		}
	}
}

// deliveryReport counts what a subscriber got per phase, for the log.
type deliveryReport map[string][2]int // phase -> {got, matching published}

// maxErrs bounds the problems checkDelivery lists.
const maxErrs = 20

// checkDelivery checks everything s received strictly: each event was
// published (same attributes as published), matches s's filter by
// match.Scan, and per publisher arrives at most once and in publish
// order; and s got every matching event of the phases complete says it
// must. It returns the counts per phase.
func checkDelivery(s *subscriber, pubs []*publisher, complete mustComplete) (deliveryReport, error) {
	got, bad := s.events()
	var errs []error
	for _, l := range bad {
		errs = append(errs, fmt.Errorf("output line %q is not an event", l))
	}
	scan := match.NewScan()
	scan.Insert(1, s.filter)
	byName := map[string]*publisher{}
	for _, p := range pubs {
		byName[p.name] = p
	}
	rep := deliveryReport{}
	for _, p := range pubs {
		for i, e := range p.events {
			if len(scan.Match(e, nil)) > 0 {
				r := rep[p.phases[i]]
				r[1]++
				rep[p.phases[i]] = r
			}
		}
	}
	last := map[string]int{}
	received := map[string]map[int]bool{}
	for i, e := range got {
		pub, seq, ok := eventTag(e)
		p := byName[pub]
		switch {
		case !ok || p == nil || seq < 0 || seq >= len(p.events):
			errs = append(errs, fmt.Errorf("event %d %v was never published", i, e))
			continue
		case !p.events[seq].Equal(e):
			errs = append(errs, fmt.Errorf("event %d: got %v, published %v", i, e, p.events[seq]))
			continue
		case len(scan.Match(e, nil)) == 0:
			errs = append(errs, fmt.Errorf("misdelivered: event %d %v does not match", i, e))
			continue
		}
		if prev, seen := last[pub]; seen && seq <= prev {
			kind := "out of order"
			if received[pub][seq] {
				kind = "duplicated"
			}
			errs = append(errs, fmt.Errorf("%s: event %d is %s#%d after %s#%d", kind, i, pub, seq, pub, prev))
		}
		last[pub] = seq
		if received[pub] == nil {
			received[pub] = map[int]bool{}
		}
		received[pub][seq] = true
		r := rep[p.phases[seq]]
		r[0]++
		rep[p.phases[seq]] = r
	}
	for pub, seqs := range expected(s, pubs, complete) {
		var missing []string
		for _, seq := range seqs {
			if !received[pub][seq] {
				missing = append(missing, fmt.Sprintf("#%d(%s)", seq, byName[pub].phases[seq]))
			}
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Errorf("lost %d events of %s it must get: %s", len(missing), pub, strings.Join(missing, " ")))
		}
	}
	if len(errs) > maxErrs {
		errs = append(errs[:maxErrs], fmt.Errorf("... and %d more", len(errs)-maxErrs))
	}
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("%s (%s at %s): %w", s.name, s.filter, s.at.name, err)
	}
	return rep, nil
}
