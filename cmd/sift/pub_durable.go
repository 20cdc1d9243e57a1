package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
)

// durablePubFlags are pub's --durable mode settings.
type durablePubFlags struct {
	on      bool
	pubend  string
	timeout time.Duration // client.DurableOptions.RetryTimeout
	rate    float64       // events per second, 0: as fast as acknowledged
}

// check refuses durable-only flags without --durable, and bad values.
func (d durablePubFlags) check(changed func(string) bool) error {
	if !d.on {
		for _, name := range []string{"pubend", "rate", "timeout"} {
			if changed(name) {
				return fmt.Errorf("--%s needs --durable", name)
			}
		}
		return nil
	}
	if d.timeout <= 0 || d.rate < 0 {
		return errors.New("--timeout must be positive and --rate not negative")
	}
	return nil
}

// publishDurable publishes events durably and returns once every one is
// logged and synced at the pubend. The client library reconnects (and
// resends what was not acknowledged) after a lost connection, so a PHB
// restart costs time, not events; it gives up when no router answered for
// d.timeout.
func publishDurable(ctx context.Context, conn routerFlags, d durablePubFlags, events []match.Event) (int, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	dopts, err := conn.durableOptions("sift-pub", d.timeout)
	if err != nil {
		return 0, err
	}
	p, err := client.NewDurablePublisher(ctx, client.DurablePublisherOptions{DurableOptions: dopts, Pubend: d.pubend})
	if err != nil {
		return 0, err
	}
	defer p.Close()
	pace := newPacer(d.rate, time.Now())
	for i, e := range events {
		if err := pace.wait(ctx, i); err != nil {
			return 0, err
		}
		if _, err := p.Publish(ctx, e); err != nil {
			return 0, fmt.Errorf("event %d: %w", i+1, err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		return 0, fmt.Errorf("%d of %d events acknowledged: %w", p.Acknowledged(), len(events), err)
	}
	return len(events), nil
}

// pacer spaces publishes to a rate.
type pacer struct {
	start time.Time
	every time.Duration // 0: no pacing
}

func newPacer(rate float64, start time.Time) pacer {
	if rate <= 0 {
		return pacer{start: start}
	}
	return pacer{start: start, every: time.Duration(float64(time.Second) / rate)}
}

// wait sleeps until event i is due.
func (p pacer) wait(ctx context.Context, i int) error {
	if p.every == 0 {
		return nil
	}
	d := time.Until(p.start.Add(time.Duration(i) * p.every))
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// durableOptions are the connection settings of a durable publisher or
// subscription: --router may list several addresses, comma-separated,
// tried in turn on every (re)connection. Keep-alives every second notice
// a restarted router (its stateless reset) quickly.
func (f *routerFlags) durableOptions(name string, retry time.Duration) (client.DurableOptions, error) {
	if f.addr == "" || f.certs == "" {
		return client.DurableOptions{}, errors.New("--router and --certs are required")
	}
	var routers []string
	for _, a := range strings.Split(f.addr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			routers = append(routers, a)
		}
	}
	os.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	cl, err := certs.Load(f.certs, certs.Client)
	if err != nil {
		return client.DurableOptions{}, err
	}
	return client.DurableOptions{
		Options:      client.Options{TLS: cl.ClientConfig(), Name: name, KeepAlive: time.Second, IdleTimeout: 10 * time.Second},
		Routers:      routers,
		RetryTimeout: retry,
	}, nil
}
