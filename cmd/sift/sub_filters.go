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
//
// A connection lost after "ready N" is not the end: the router has
// dropped its filters with it, so the command says so on stderr, dials
// again with backoff, subscribes the connection's filters again and, once
// no connection is left down, writes "ready N" again (filterConns.keep);
// events published meanwhile are not delivered, as with a plain sift sub.
// Its connections time out after filtersIdleTimeout of silence, not the
// client's default: a subscriber of many filters on a loaded machine must
// not lose them, and the router's cost of installing them again, to a
// few seconds without CPU.
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
	fc := &filterConns{texts: texts, addr: conn.addr, stderr: stderr, dial: func(ctx context.Context) (*client.Client, error) {
		return conn.dialOptions(ctx, client.Options{Name: "sift-sub", Assist: assist, IdleTimeout: filtersIdleTimeout})
	}}
	first, err := fc.dial(ctx)
	if err != nil {
		return err
	}
	fc.per = len(texts)
	if max := first.MaxSubscriptions(); max > 0 && uint64(fc.per) > max {
		fc.per = int(max)
	}
	fc.clients = []*client.Client{first}
	defer fc.close()
	for len(fc.clients)*fc.per < len(texts) {
		c, err := fc.dial(ctx)
		if err != nil {
			return err
		}
		fc.clients = append(fc.clients, c)
	}
	fc.out = &filterPrinter{w: bufio.NewWriter(stdout), lines: make(chan []byte, 4096), per: fc.per}
	if len(fc.clients) > 1 {
		fc.out.idx = match.NewFast(match.FastConfig{})
		for i, f := range filters {
			if err := fc.out.idx.Insert(match.ID(i), f); err != nil {
				return fmt.Errorf("--filters %s: filter %d: %w", path, i, err)
			}
		}
	}
	filters = nil
	errs := make([]error, len(fc.clients))
	prog := newInstallProgress(stderr, len(texts), len(fc.clients))
	var wg sync.WaitGroup
	for k, c := range fc.clients {
		wg.Go(func() { errs[k] = fc.install(ctx, k, c, prog.conn(k)) })
	}
	wg.Wait()
	prog.finish()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "ready %d\n", len(texts))
	if opts.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.timeout)
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := make(chan error, len(fc.clients))
	for k := range fc.clients {
		go fc.keep(ctx, k, failed)
	}
	return fc.out.run(ctx, opts.count, failed)
}

// filtersIdleTimeout is how long a connection of sift sub --filters may
// stay silent before it is taken for lost: the router's own default
// (router.Config.IdleTimeout), where a plain client waits 5 s.
const filtersIdleTimeout = 30 * time.Second

// Backoff between the dials of a lost --filters connection: doubling
// from the first, up to the last.
const (
	filtersMinBackoff = 100 * time.Millisecond
	filtersMaxBackoff = 5 * time.Second
)

// filterConns are the connections of sift sub --filters, connection k
// holding the file's filters [k*per, (k+1)*per). It keeps the file's
// texts for as long as it runs, to subscribe them again on a new
// connection.
type filterConns struct {
	texts  []string
	per    int
	addr   string // the router's, for what stderr says
	out    *filterPrinter
	stderr io.Writer
	dial   func(context.Context) (*client.Client, error)

	mu      sync.Mutex // guards clients, down and closed
	clients []*client.Client
	down    int  // connections lost and not yet installed again
	closed  bool // close ran: connections dialled after it are closed at once
}

// install subscribes connection k's filters on c (progress as
// SubscribeBatchProgress's), delivering their events to the printer.
func (fc *filterConns) install(ctx context.Context, k int, c *client.Client, progress func(int)) error {
	lo, hi := k*fc.per, min((k+1)*fc.per, len(fc.texts))
	deliver := func(subs []int, e match.Event) { fc.out.deliver(k, lo, subs, e) }
	if _, err := c.SubscribeBatchProgress(ctx, fc.texts[lo:hi], deliver, progress); err != nil {
		return fmt.Errorf("filters %d-%d: %w", lo, hi-1, err)
	}
	return nil
}

// keep re-establishes connection k each time it ends, until ctx ends: it
// says so on stderr, dials again with backoff, installs the connection's
// filters again, and writes "ready N" again once no connection is left
// down. A refusal of the filters on the new connection (the router's
// permissions or limits changed) is fatal, sent on failed.
func (fc *filterConns) keep(ctx context.Context, k int, failed chan<- error) {
	for {
		fc.mu.Lock()
		c := fc.clients[k]
		fc.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-c.Done():
		}
		if ctx.Err() != nil {
			return
		}
		fc.mu.Lock()
		fc.down++
		fc.mu.Unlock()
		fmt.Fprintf(fc.stderr, "connection %d to %s lost (%v); reconnecting\n", k, fc.addr, c.Err())
		nc, err := fc.redial(ctx, k)
		if err != nil {
			if ctx.Err() == nil {
				failed <- err
			}
			return
		}
		fc.mu.Lock()
		if fc.closed {
			fc.mu.Unlock()
			nc.Close()
			return
		}
		fc.clients[k] = nc
		fc.down--
		ready := fc.down == 0
		fc.mu.Unlock()
		if ready {
			fmt.Fprintf(fc.stderr, "ready %d\n", len(fc.texts))
		}
	}
}

// redial dials until a connection holds connection k's filters again, with
// backoff between the attempts that failed because no connection was
// made or it ended meanwhile; another failure of the install is returned.
func (fc *filterConns) redial(ctx context.Context, k int) (*client.Client, error) {
	for backoff := filtersMinBackoff; ; backoff = min(2*backoff, filtersMaxBackoff) {
		c, err := fc.dial(ctx)
		if err == nil {
			err = fc.install(ctx, k, c, nil)
			if err == nil {
				return c, nil
			}
			lost := c.Err() != nil // the connection ended meanwhile: try again
			c.Close()
			if !lost {
				return nil, fmt.Errorf("connection %d: %w", k, err)
			}
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// close closes every connection; connections a keeper dials later are
// closed as they come.
func (fc *filterConns) close() {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.closed = true
	for _, c := range fc.clients {
		c.Close()
	}
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

// run writes lines until count lines (0: no limit), ctx's end, or an
// error on failed (a connection that could not be established again).
func (p *filterPrinter) run(ctx context.Context, count int, failed <-chan error) error {
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
