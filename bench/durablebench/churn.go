package durablebench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// churn runs the disconnection pattern over subs until stop: subscriber i
// first goes away at i*Every/len(subs), then every Every, for For each
// time. Wait returns the number of disconnections and the first error.
type churn struct {
	wg    sync.WaitGroup
	stop  chan struct{}
	count atomic.Int64
	mu    sync.Mutex
	err   error
}

func startChurn(ctx context.Context, c Churn, subs []Subscriber) *churn {
	ch := &churn{stop: make(chan struct{})}
	if !c.On() {
		return ch
	}
	start := time.Now()
	for i, s := range subs {
		offset := time.Duration(int64(c.Every) * int64(i) / int64(len(subs)))
		ch.wg.Add(1)
		go func() {
			defer ch.wg.Done()
			ch.cycle(ctx, c, s, start.Add(offset))
		}()
	}
	return ch
}

// cycle disconnects s at next, next+Every, ... until stop; it always
// leaves s connected.
func (ch *churn) cycle(ctx context.Context, c Churn, s Subscriber, next time.Time) {
	for {
		select {
		case <-time.After(time.Until(next)):
		case <-ch.stop:
			return
		}
		if err := s.Pause(); err != nil {
			ch.fail(err)
			return
		}
		ch.count.Add(1)
		select {
		case <-time.After(c.For):
		case <-ch.stop:
		}
		if err := s.Resume(ctx); err != nil {
			ch.fail(err)
			return
		}
		next = next.Add(c.Every)
	}
}

func (ch *churn) fail(err error) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.err == nil {
		ch.err = fmt.Errorf("churn: %w", err)
	}
}

// end stops the pattern (reconnecting whoever is away) and waits.
func (ch *churn) end() (int, error) {
	close(ch.stop)
	ch.wg.Wait()
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return int(ch.count.Load()), ch.err
}
