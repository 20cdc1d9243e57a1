package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
)

// subscribeSession connects a reconnecting client (client.Session) to
// the routers of --router (comma-separated; tried in turn) and installs
// filter. After a lost connection it says so on stderr, reconnects with
// backoff, installs the filter again and writes "ready" again; events
// published meanwhile are not delivered (see client.Session).
func subscribeSession(ctx context.Context, conn routerFlags, filter string, stderr io.Writer) (*client.Session, *client.SessionSub, error) {
	if conn.addr == "" || conn.certs == "" {
		return nil, nil, errors.New("--router and --certs are required")
	}
	os.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	cl, err := certs.Load(conn.certs, certs.Client)
	if err != nil {
		return nil, nil, err
	}
	var connected atomic.Int64
	so := client.SessionOptions{
		DialTimeout: conn.dialTimeout,
		OnReady: func(string) {
			if connected.Add(1) > 1 {
				fmt.Fprintln(stderr, "ready")
			}
		},
		OnLost: func(addr string, err error) {
			fmt.Fprintf(stderr, "connection to %s lost (%v); reconnecting\n", addr, err)
		},
	}
	dctx, cancel := context.WithTimeout(ctx, conn.dialTimeout)
	defer cancel()
	sess, err := client.DialSession(dctx, strings.Split(conn.addr, ","), client.Options{TLS: cl.ClientConfig(), Name: "sift-sub"}, so)
	if err != nil {
		return nil, nil, fmt.Errorf("dial %s: %w", conn.addr, err)
	}
	ss, err := sess.Subscribe(ctx, filter)
	if err != nil {
		sess.Close()
		return nil, nil, err
	}
	return sess, ss, nil
}
