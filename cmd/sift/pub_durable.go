package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	id      string        // the publisher id; "" derives one from the input (see publisherID)
	timeout time.Duration // client.DurableOptions.RetryTimeout
	rate    float64       // events per second, 0: as fast as acknowledged
}

// check refuses durable-only flags without --durable, and bad values.
func (d durablePubFlags) check(changed func(string) bool) error {
	if !d.on {
		for _, name := range []string{"pubend", "rate", "timeout", "id"} {
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
//
// Event i of the input is sequence i+1 of the publisher id, so a run with
// the id of an earlier one resumes: the pubend says how many sequences it
// logged for the id, and those events are not sent again. It returns the
// events logged in all and how many of them an earlier run had logged.
func publishDurable(ctx context.Context, conn routerFlags, d durablePubFlags, path string, events []match.Event) (n, earlier int, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	dopts, err := conn.durableOptions("sift-pub", d.timeout)
	if err != nil {
		return 0, 0, err
	}
	dopts.Heartbeat, dopts.DialTimeout = pubHeartbeat, pubDialTimeout
	id := d.id
	if id == "" {
		id = publisherID(path)
	}
	p, err := client.NewDurablePublisher(ctx, client.DurablePublisherOptions{DurableOptions: dopts, Pubend: d.pubend, ID: id})
	if err != nil {
		return 0, 0, err
	}
	defer p.Close()
	logged := p.Published() // what earlier runs with this id logged
	if logged > uint64(len(events)) {
		return 0, 0, fmt.Errorf("pubend %s logged %d events for publisher id %s, more than the %d of this input: another input under the same id? (use --id)",
			p.Pubend(), logged, id, len(events))
	}
	pace := newPacer(d.rate, time.Now())
	for i, e := range events[logged:] {
		if err := pace.wait(ctx, i); err != nil {
			return 0, 0, acknowledged(p, id, len(events), err)
		}
		if _, err := p.Publish(ctx, e); err != nil {
			return 0, 0, acknowledged(p, id, len(events), fmt.Errorf("event %d: %w", int(logged)+i+1, err))
		}
	}
	if err := p.Flush(ctx); err != nil {
		return 0, 0, acknowledged(p, id, len(events), err)
	}
	return len(events), int(logged), nil
}

// acknowledged wraps a failure with what is logged: events 1 to
// Acknowledged of the input, and how to resume.
func acknowledged(p *client.DurablePublisher, id string, total int, err error) error {
	n := p.Acknowledged()
	which := "none"
	if n > 0 {
		which = fmt.Sprintf("events 1-%d of the input", n)
	}
	return fmt.Errorf("%d of %d events acknowledged (%s); run again with --id %s to publish the rest: %w", n, total, which, id, err)
}

// publisherID derives the default publisher id of an input: from the
// host name and the file's absolute path, so that running the same file
// again on the same host resumes. Standard input gets a random id (its
// content may differ from run to run).
func publisherID(path string) string {
	if path == "-" || path == "" {
		var b [8]byte
		rand.Read(b[:])
		return "pub-" + hex.EncodeToString(b[:])
	}
	host, _ := os.Hostname()
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	h := sha256.Sum256([]byte(host + "\x00" + path))
	return "pub-" + hex.EncodeToString(h[:8])
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

// A durable publisher takes its router for gone after pubHeartbeat of
// silence (four of the router's heartbeat periods of 250 ms) and gives up
// on a connection attempt after pubDialTimeout, so that after a kill -9
// of the router leading a replicated pubend it is at the new leader in
// about a second (the election takes 0.5 to 1 s meanwhile), not after
// the connection's 10 s idle timeout. A false alarm (a router stalled
// that long) costs a reconnection; the pubend logs each event once all
// the same.
const (
	pubHeartbeat   = time.Second
	pubDialTimeout = time.Second
)

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
