package client

import (
	"context"
	"errors"

	"github.com/sift-pubsub/sift/match"
)

// errNotYet is returned while the durable client is being built.
var errNotYet = errors.New("durable client: not implemented yet")

type durablePub struct{ id, pubend string }

func newDurablePublisher(context.Context, DurablePublisherOptions) (*DurablePublisher, error) {
	return nil, errNotYet
}
func (p *durablePub) publish(context.Context, match.Event) (uint64, error) { return 0, errNotYet }
func (p *durablePub) flush(context.Context) error                         { return errNotYet }
func (p *durablePub) published() uint64                                   { return 0 }
func (p *durablePub) acknowledged() uint64                                { return 0 }
func (p *durablePub) errNow() error                                       { return errNotYet }
func (p *durablePub) close() error                                        { return nil }

type durableSub struct {
	id   string
	out  chan DurableMessage
	done chan struct{}
}

func durableSubscribe(context.Context, DurableSubscribeOptions) (*DurableSubscription, error) {
	return nil, errNotYet
}
func (s *durableSub) ack(CT) error                      { return errNotYet }
func (s *durableSub) routerName() string                { return "" }
func (s *durableSub) errNow() error                     { return errNotYet }
func (s *durableSub) close() error                      { return nil }
func (s *durableSub) unsubscribe(context.Context) error { return errNotYet }
