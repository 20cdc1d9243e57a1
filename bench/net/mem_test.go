package netbench

import (
	"context"
	"sync"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// memSystem is an in-memory broker for testing the harness: a publish
// hands the event to every subscriber whose filter matches, on the
// publisher's goroutine. broken makes it deliver the first event it sees
// twice.
type memSystem struct {
	name   string
	broken bool
}

func (m memSystem) Name() string { return m.name }

func (m memSystem) Start(context.Context, int, string) (Cluster, error) {
	return &memCluster{broken: m.broken}, nil
}

type memCluster struct {
	mu     sync.Mutex
	subs   []workload.NetSub
	funcs  []func(match.Event)
	broken bool
	bytes  int64
}

func (c *memCluster) Subscribe(_ context.Context, _ int, sub workload.NetSub, deliver func(match.Event)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subs = append(c.subs, sub)
	c.funcs = append(c.funcs, deliver)
	return nil
}

func (c *memCluster) Publisher(context.Context, int, bool) (Publisher, error) { return c, nil }

func (c *memCluster) Publish(_ context.Context, e match.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range c.subs {
		if s.Filter.Matches(e) {
			c.bytes += 100
			c.funcs[i](e)
			if c.broken {
				c.funcs[i](e)
				c.broken = false
			}
		}
	}
	return nil
}

func (c *memCluster) Flush(context.Context) error { return nil }

func (c *memCluster) WireBytes() (int64, string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, "test", true
}

func (c *memCluster) Close() error { return nil }
