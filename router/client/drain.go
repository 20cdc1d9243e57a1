package client

import (
	"context"
	"fmt"

	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/internal/wire"
)

// Drain ends the connection gracefully: it sends the partial publish
// batch, waits (until ctx ends) until the router has accepted every event
// published so far, then closes the connection, ending the
// subscriptions with ErrClosed. Unlike Close it loses nothing published;
// if ctx ends first, or the connection fails, it closes anyway and
// returns why (Accepted says how many events the router took).
func (c *Client) Drain(ctx context.Context) error {
	err := c.Flush(ctx)
	c.fail(ErrClosed)
	c.qc.CloseWithError(quic.ApplicationErrorCode(wire.CodeNone), "client drained")
	if err != nil {
		return fmt.Errorf("drain: %d events accepted: %w", c.Accepted(), err)
	}
	return nil
}
