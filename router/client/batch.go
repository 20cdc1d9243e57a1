package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// Batch is a set of subscriptions installed together by SubscribeBatch:
// one per filter, in the filters' order. Its deliveries go to the callback
// given to SubscribeBatch, not to Subscription channels, so a batch of 10^5
// filters costs the client a few words per filter (its ids are a range),
// not a Subscription each.
type Batch struct {
	first uint64 // id of filter 0 on the connection
	n     int
	on    func(subs []int, e match.Event)
	subs  []int // scratch for hand (the data reader is its only user)
}

// Len returns the number of filters of the batch.
func (b *Batch) Len() int { return b.n }

// batchFrameFilters and batchFrameBytes bound one SubscribeBatch frame;
// batchInFlight bounds the frames sent and not yet acknowledged.
const (
	batchFrameFilters = 4096
	batchFrameBytes   = 512 << 10
	batchInFlight     = 8
)

// SubscribeBatch installs every filter of filters as a subscription of
// this connection, sending them in SubscribeBatch frames (at most 4096
// filters or 512 KiB each, 8 frames in flight), and returns once the
// router has acknowledged every frame: each filter installed on every
// router it must reach. on receives each delivery for the batch: the
// positions in filters of the matching filters (ascending) and the event,
// on the connection's reader goroutine (with Options.OnBorrowedEvent, a
// borrowed event, valid during the call only). The number of filters must
// stay within the router's per-connection limit (MaxSubscriptions).
//
// A filter the router refuses (malformed, or the limit reached) makes
// SubscribeBatch return an error naming its position; the frames already
// acknowledged stay installed (close the connection to drop them).
func (c *Client) SubscribeBatch(ctx context.Context, filters []string, on func(subs []int, e match.Event)) (*Batch, error) {
	return c.SubscribeBatchProgress(ctx, filters, on, nil)
}

// SubscribeBatchProgress is SubscribeBatch that also calls progress, if
// not nil, each time the router acknowledges a frame, with the number of
// filters acknowledged so far (concurrent calls are serialised; the
// counts only grow): for showing a long install's progress.
func (c *Client) SubscribeBatchProgress(ctx context.Context, filters []string, on func(subs []int, e match.Event), progress func(acked int)) (*Batch, error) {
	if len(filters) == 0 {
		return nil, errors.New("client: subscribe batch: no filters")
	}
	if on == nil {
		return nil, errors.New("client: subscribe batch: no event callback")
	}
	if max := c.welcome.MaxSubscriptions; max > 0 && uint64(len(filters)) > max {
		return nil, fmt.Errorf("client: subscribe batch: %d filters exceed the router's %d subscriptions per connection", len(filters), max)
	}
	n := uint64(len(filters))
	b := &Batch{first: c.nextSub.Add(n) - n + 1, n: len(filters), on: on}
	c.addBatch(b)
	var (
		wg    sync.WaitGroup
		slots = make(chan struct{}, batchInFlight)
		mu    sync.Mutex
		first error // the refusal of the lowest frame refused
		at    = len(filters)
		acked int // guarded by mu, as progress's calls
	)
	for start := 0; start < len(filters); {
		end, size := start, 0
		for end < len(filters) && end-start < batchFrameFilters && (end == start || size+len(filters[end])+8 <= batchFrameBytes) {
			size += len(filters[end]) + 8
			end++
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return nil, ctx.Err()
		}
		id := b.first + uint64(start)
		wg.Add(1)
		go func(start int, m *wire.SubscribeBatch) {
			defer wg.Done()
			defer func() { <-slots }()
			err := c.request(ctx, reqKey{wire.TypeSubscribeBatch, id}, m)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if start < at {
					at, first = start, err
				}
				return
			}
			if acked += len(m.Filters); progress != nil {
				progress(acked)
			}
		}(start, &wire.SubscribeBatch{First: id, Filters: filters[start:end]})
		start = end
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
	}
	wg.Wait()
	if first != nil {
		return nil, fmt.Errorf("client: subscribe batch (filters from %d): %w", at, first)
	}
	return b, nil
}

// addBatch records b for the data reader (copy on write: hand reads the
// list without a lock).
func (c *Client) addBatch(b *Batch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var list []*Batch
	if p := c.batches.Load(); p != nil {
		list = slices.Clone(*p)
	}
	list = append(list, b) // ids only grow: the list stays sorted by first
	c.batches.Store(&list)
}

// handBatches hands e to every batch holding one of ids and returns the
// ids that belong to no batch.
func (c *Client) handBatches(ids []uint64, e match.Event) []uint64 {
	p := c.batches.Load()
	if p == nil {
		return ids
	}
	list := *p
	slices.Sort(ids) // one call per batch and event, even if ids interleave
	rest := ids[:0:0]
	var cur *Batch
	flush := func() {
		if cur != nil && len(cur.subs) > 0 {
			slices.Sort(cur.subs)
			cur.on(cur.subs, e)
			cur.subs = cur.subs[:0]
		}
	}
	for _, id := range ids {
		if cur == nil || id < cur.first || id >= cur.first+uint64(cur.n) {
			i, _ := slices.BinarySearchFunc(list, id, func(b *Batch, id uint64) int {
				switch {
				case b.first+uint64(b.n) <= id:
					return -1
				case b.first > id:
					return 1
				}
				return 0
			})
			if i == len(list) || list[i].first > id {
				rest = append(rest, id)
				continue
			}
			if list[i] != cur {
				flush()
				cur = list[i]
			}
		}
		cur.subs = append(cur.subs, int(id-cur.first))
	}
	flush()
	return rest
}

// MaxSubscriptions returns the router's limit on this connection's
// subscriptions, from its Welcome (0: none announced).
func (c *Client) MaxSubscriptions() uint64 { return c.welcome.MaxSubscriptions }
