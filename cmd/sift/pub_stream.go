package main

import (
	"context"
	"errors"

	"io"
	"os"

	"github.com/sift-pubsub/sift/match"
)

// publishStream is sift pub --stream: it publishes each event as its line
// arrives (a partial batch leaves after the client's linger, so a slow
// pipe's events are not held back), instead of checking the whole input
// first. A bad line stops it with an error naming the line; the events
// before it are published (flushed) first. It returns how many events the
// router accepted.
func publishStream(ctx context.Context, conn routerFlags, stdin io.Reader, path string) (int, error) {
	in := stdin
	name := "stdin"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		in, name = f, path
	}
	c, err := conn.dial(ctx, "sift-pub")
	if err != nil {
		return 0, err
	}
	defer c.Close()
	type item struct {
		ev  match.Event
		err error
	}
	lines := make(chan item, 1024)
	go func() { // a blocked read of a pipe must not keep a signal from stopping pub
		r := match.NewEventReader(in)
		for {
			e, err := r.Next()
			select {
			case lines <- item{e, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	n := 0
	for {
		var it item
		select {
		case it = <-lines:
		case <-ctx.Done():
			return int(c.Accepted()), acceptedError(c.Accepted(), n, ctx.Err())
		}
		if errors.Is(it.err, io.EOF) {
			break
		}
		if it.err != nil {
			ferr := c.Flush(ctx)
			return int(c.Accepted()), acceptedError(c.Accepted(), n, errors.Join(fileError(name, it.err), ferr))
		}
		if err := c.Publish(ctx, it.ev); err != nil {
			return int(c.Accepted()), acceptedError(c.Accepted(), n+1, err)
		}
		n++
	}
	if err := c.Flush(ctx); err != nil {
		return int(c.Accepted()), acceptedError(c.Accepted(), n, err)
	}
	return n, nil
}
