package client

import (
	"context"
	"fmt"

	"github.com/sift-pubsub/sift/internal/wire"
)

// Advertisement is a publisher's announcement, at its router, of the
// events it will publish (routers started with --advertise).
type Advertisement struct {
	id     uint64
	filter string
}

// ID returns the advertisement's id on its connection.
func (a *Advertisement) ID() uint64 { return a.id }

// Filter returns the advertised filter text.
func (a *Advertisement) Filter() string { return a.filter }

// Advertise announces that the events this client publishes will match
// filter. Against a router that runs advertisements it returns once every
// subscription anywhere in the mesh that overlaps filter is installed at
// the router, so an event published afterwards reaches every subscription
// that was already installed (Subscribe had returned); the router refuses
// an event that matches none of the client's advertisements, closing the
// connection with an error that names it. Advertise before publishing.
// Against a router without advertisements it is acknowledged at once (every
// subscription already reaches every router). A malformed filter is a
// *wire.ProtocolError with CodeBadFilter. If ctx ends first the
// advertisement may still be installed (until Unadvertise with an
// Advertisement of the same ID, or Close).
func (c *Client) Advertise(ctx context.Context, filter string) (*Advertisement, error) {
	a := &Advertisement{id: c.nextSub.Add(1), filter: filter}
	if err := c.request(ctx, reqKey{wire.TypeAdvertise, a.id}, &wire.Advertise{ID: a.id, Filter: filter}); err != nil {
		return nil, fmt.Errorf("advertise %q: %w", filter, err)
	}
	return a, nil
}

// Unadvertise withdraws an advertisement: events matching it alone are
// refused from then on (subscriptions that reached the router because of
// it stay until they are unsubscribed or a link resyncs). The events
// published before it still travel under it: Unadvertise first flushes
// them and waits until the router has taken them (as Flush), since they
// travel on the data stream and the withdrawal on the control stream,
// which the router may read first. It returns once the router
// acknowledged the withdrawal.
func (c *Client) Unadvertise(ctx context.Context, a *Advertisement) error {
	if err := c.Flush(ctx); err != nil {
		return fmt.Errorf("unadvertise %q: %w", a.filter, err)
	}
	if err := c.request(ctx, reqKey{wire.TypeUnadvertise, a.id}, &wire.Unadvertise{ID: a.id}); err != nil {
		return fmt.Errorf("unadvertise %q: %w", a.filter, err)
	}
	return nil
}
