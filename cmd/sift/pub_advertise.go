package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/client"
)

// advertFlag is sift pub's repeatable --advertise FILTER: each filter is
// parsed when the flag is read, so a malformed one fails before anything
// is sent. hold is --hold: how long to stay connected after publishing.
type advertFlag struct {
	texts   []string
	filters []match.Filter
	hold    time.Duration
}

func (a *advertFlag) String() string { return strings.Join(a.texts, ", ") }

// Set parses and records one --advertise filter.
func (a *advertFlag) Set(text string) error {
	f, err := match.Parse(text)
	if err != nil {
		return fmt.Errorf("filter %q: %w", text, err)
	}
	a.texts = append(a.texts, text)
	a.filters = append(a.filters, f)
	return nil
}

// Type names the flag's value in help output.
func (a *advertFlag) Type() string { return "FILTER" }

// pubAdverts holds sift pub's --advertise filters.
var pubAdverts advertFlag

// checkAdvertFlags refuses --advertise with --durable: durable publishing
// needs no advertisement (durable subscriptions reach the pubend by the
// durable protocol's own installs, which advertisements do not restrict),
// and a pubend takes every event its publishers send.
func checkAdvertFlags(durable bool) error {
	if pubAdverts.hold < 0 || pubAdverts.hold > 0 && len(pubAdverts.filters) == 0 {
		return errors.New("--hold needs --advertise and a duration of zero or more")
	}
	if durable && len(pubAdverts.filters) > 0 {
		return errors.New("--advertise does not combine with --durable: durable delivery needs no advertisement, even between routers started with --advertise (durable subscriptions reach every pubend by the durable protocol)")
	}
	return nil
}

// advertiseAll checks that every event matches one of the --advertise
// filters (the router would refuse the others; here nothing is sent), then
// advertises each on c and returns once the router acknowledged them all:
// every subscription that overlaps them is then installed at the router.
// Without --advertise it does nothing.
func advertiseAll(ctx context.Context, c *client.Client, events []match.Event) error {
	if len(pubAdverts.filters) == 0 {
		return nil
	}
	for i, e := range events {
		if !matchesAny(pubAdverts.filters, e) {
			return fmt.Errorf("event %d %s matches none of the --advertise filters", i+1, e)
		}
	}
	for _, text := range pubAdverts.texts {
		if _, err := c.Advertise(ctx, text); err != nil {
			return err
		}
	}
	return nil
}

// holdAdverts keeps the publisher connected for --hold (or until ctx
// ends), so its advertisements stay in place: a demonstration, or a
// publisher that publishes again from another process meanwhile.
func holdAdverts(ctx context.Context) {
	if pubAdverts.hold <= 0 {
		return
	}
	t := time.NewTimer(pubAdverts.hold)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func matchesAny(fs []match.Filter, e match.Event) bool {
	for _, f := range fs {
		if f.Matches(e) {
			return true
		}
	}
	return false
}
