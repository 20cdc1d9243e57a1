package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/client"
)

// subscribeFile is sift sub --filters FILE: every filter of a
// subscriptions file (the format of sift match; ids count the lines that
// are not blank or comments from 0) subscribed in SubscribeBatch frames,
// "ready N" on stderr once all N are installed on every router they must
// reach, then one line {"subs":[ID,...],"event":{...}} per delivered event
// with the matching ids ascending.
//
// The router bounds each connection's subscriptions (siftd
// --max-subscriptions-per-conn, announced in its Welcome); a file with
// more filters is spread over as many connections as it takes, each
// holding a contiguous range of ids. An event matching filters of several
// connections is then delivered on each of them: the command matches it
// against every filter of the file with its own index, prints it once, on
// the delivery of the lowest connection holding a match, with every
// matching id, and ignores the other deliveries. Connections are
// independent streams, so lines printed on different connections'
// deliveries keep no publish order between them.
func subscribeFile(ctx context.Context, conn routerFlags, opts subOptions, path string, stdout, stderr io.Writer) error {
	if opts.count < 0 || opts.timeout < 0 {
		return errors.New("--count and --timeout must not be negative")
	}
	if opts.assist {
		return errors.New("--filters takes no --assist (a batch is placed by the router alone)")
	}
	texts, filters, err := readFiltersFile(path)
	if err != nil {
		return err
	}
	if len(texts) == 0 {
		return fmt.Errorf("--filters %s: no filters", path)
	}
	var assist *client.Assist
	if opts.claim {
		assist = &client.Assist{Claim: true}
	}
	first, err := conn.dialAssist(ctx, "sift-sub", assist)
	if err != nil {
		return err
	}
	per := len(texts)
	if max := first.MaxSubscriptions(); max > 0 && uint64(per) > max {
		per = int(max)
	}
	clients := []*client.Client{first}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for len(clients)*per < len(texts) {
		c, err := conn.dialAssist(ctx, "sift-sub", assist)
		if err != nil {
			return err
		}
		clients = append(clients, c)
	}
	out := &filterPrinter{w: bufio.NewWriter(stdout), lines: make(chan []byte, 4096), per: per}
	if len(clients) > 1 {
		out.idx = match.NewFast(match.FastConfig{})
		for i, f := range filters {
			if err := out.idx.Insert(match.ID(i), f); err != nil {
				return fmt.Errorf("--filters %s: filter %d: %w", path, i, err)
			}
		}
	}
	filters = nil
	errs := make([]error, len(clients))
	prog := newInstallProgress(stderr, len(texts), len(clients))
	var wg sync.WaitGroup
	for k, c := range clients {
		lo, hi := k*per, min((k+1)*per, len(texts))
		wg.Go(func() {
			deliver := func(subs []int, e match.Event) { out.deliver(k, lo, subs, e) }
			if _, err := c.SubscribeBatchProgress(ctx, texts[lo:hi], deliver, prog.conn(k)); err != nil {
				errs[k] = fmt.Errorf("filters %d-%d: %w", lo, hi-1, err)
			}
		})
	}
	wg.Wait()
	prog.finish()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	n := len(texts)
	texts = nil
	fmt.Fprintf(stderr, "ready %d\n", n)
	if opts.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.timeout)
		defer cancel()
	}
	return out.run(ctx, opts.count, clients)
}

// readFiltersFile reads a subscriptions file: the canonical text of each
// filter (what is sent) and the filters (for the command's own index when
// several connections are needed). A malformed line is an error naming it.
func readFiltersFile(path string) ([]string, []match.Filter, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--filters: %w", err)
	}
	defer f.Close()
	r := match.NewSubscriptionReader(bufio.NewReaderSize(f, 1<<20))
	var texts []string
	var filters []match.Filter
	for {
		flt, err := r.Next()
		if errors.Is(err, io.EOF) {
			return texts, filters, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("--filters %s:%w", path, err)
		}
		texts = append(texts, flt.String())
		filters = append(filters, flt)
	}
}

// filterPrinter turns the deliveries of the connections into output
// lines, in the order they were delivered, and writes them.
type filterPrinter struct {
	w     *bufio.Writer
	lines chan []byte
	per   int // filters per connection

	mu  sync.Mutex  // guards idx and ids (deliveries come from every connection's reader)
	idx *match.Fast // every filter of the file, ids as in the file; nil with one connection
	ids []match.ID
}

// deliver is connection k's callback (its filters start at id lo).
func (p *filterPrinter) deliver(k, lo int, subs []int, e match.Event) {
	line := []byte(`{"subs":[`)
	if p.idx == nil {
		for i, s := range subs {
			line = appendID(line, i, lo+s)
		}
	} else {
		p.mu.Lock()
		p.ids = match.SortIDs(p.idx.Match(e, p.ids[:0]))
		owner := -1
		if len(p.ids) > 0 {
			owner = int(p.ids[0]) / p.per
		}
		if owner != k { // printed on the lowest connection holding a match
			p.mu.Unlock()
			return
		}
		for i, id := range p.ids {
			line = appendID(line, i, int(id))
		}
		p.mu.Unlock()
	}
	line = append(e.AppendJSON(append(line, `],"event":`...)), "}\n"...)
	p.lines <- line
}

func appendID(b []byte, i, id int) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	return strconv.AppendInt(b, int64(id), 10)
}

// run writes lines until count lines (0: no limit), ctx's end, or a
// connection's failure.
func (p *filterPrinter) run(ctx context.Context, count int, clients []*client.Client) error {
	failed := make(chan error, len(clients))
	for _, c := range clients {
		go func() {
			select {
			case <-c.Done():
				failed <- c.Err()
			case <-ctx.Done():
			}
		}()
	}
	flush := time.NewTicker(50 * time.Millisecond)
	defer flush.Stop()
	for n := 0; count == 0 || n < count; {
		select {
		case line := <-p.lines:
			p.w.Write(line)
			n++
			if len(p.lines) == 0 { // flushed per line unless more are waiting
				if err := p.w.Flush(); err != nil {
					return err
				}
			}
		case <-flush.C:
			if err := p.w.Flush(); err != nil {
				return err
			}
		case err := <-failed:
			p.w.Flush()
			return err
		case <-ctx.Done():
			p.w.Flush()
			switch {
			case count == 0:
				return nil // --timeout, Ctrl-C or SIGTERM: the normal end
			case errors.Is(ctx.Err(), context.DeadlineExceeded):
				return fmt.Errorf("timed out after %d of %d events", n, count)
			}
			return ctx.Err()
		}
	}
	return p.w.Flush()
}

// installProgress shows, on a terminal's stderr, how many of the file's
// filters the routers have acknowledged so far (a nil bar, off a
// terminal, shows nothing: scripts read only "ready N").
type installProgress struct {
	bar   *benchBar
	total int
	mu    sync.Mutex
	acked []int // per connection
}

func newInstallProgress(stderr io.Writer, total, conns int) *installProgress {
	return &installProgress{bar: newBenchBar(stderr, false, "subscribing"), total: total, acked: make([]int, conns)}
}

// conn returns connection k's progress callback (nil without a bar).
func (p *installProgress) conn(k int) func(int) {
	if p.bar == nil {
		return nil
	}
	return func(acked int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.acked[k] = acked
		sum := 0
		for _, a := range p.acked {
			sum += a
		}
		p.bar.update(sum, p.total, "")
	}
}

func (p *installProgress) finish() { p.bar.finish() }
