package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/sift-pubsub/sift/internal/loadgc"
	"github.com/sift-pubsub/sift/match"
)

// loadSubscriptionsFile streams the subscriptions file into idx through its
// loader: a line is parsed, handed over and dropped. It reports progress
// on stderr (a bar on a terminal, or lines with --progress) and stops when
// ctx is cancelled, leaving idx unchanged on any error.
func loadSubscriptionsFile(ctx context.Context, idx match.Index, opts matchOptions, stderr io.Writer) error {
	f, err := os.Open(opts.subs)
	if err != nil {
		return fmt.Errorf("match: %w", err)
	}
	defer f.Close()
	// A cancel closes the file, which also ends a read blocked on a pipe.
	defer context.AfterFunc(ctx, func() { f.Close() })()
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	// The build's lists are most of the heap and parsed filters short-lived
	// garbage beside them: a bounded headroom over the live heap keeps the
	// peak resident memory near the index's own (unless GOGC is set).
	pacer := loadgc.Start()
	defer pacer.Stop()
	prog := newLoadProgress(stderr, opts, size)
	expect := opts.expect
	if _, sized := idx.(match.SizedLoader); sized && expect <= 0 {
		if expect, err = countLines(f); err != nil {
			return fmt.Errorf("match: %w", err)
		}
	}
	r := match.NewSubscriptionReader(f)
	l := match.NewSizedLoader(idx, expect)
	for {
		fl, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			prog.finish()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fileError(opts.subs, err)
		}
		n := r.Count()
		pacer.Step()
		if err := l.Add(match.ID(n-1), fl); err != nil {
			prog.finish()
			return fmt.Errorf("match: load %s: %w", opts.subs, err)
		}
		if n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				prog.finish()
				return err
			}
			prog.update(n, r.Bytes())
		}
	}
	prog.building(r.Count(), r.Bytes())
	err = l.Finish()
	prog.finish()
	if err != nil {
		return fmt.Errorf("match: load %s: %w", opts.subs, err)
	}
	prog.done(r.Count())
	return nil
}

// countLines returns the number of lines of a regular file (a bound on
// its subscriptions: blank and comment lines hold none) and rewinds it,
// or 0 for a pipe, which cannot be read twice. A pass over the file costs
// about a second per few GB, little beside parsing it.
func countLines(f *os.File) (int, error) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0, nil
	}
	buf := make([]byte, 1<<20)
	n := 0
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("count lines of %s: %w", f.Name(), err)
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("rewind %s: %w", f.Name(), err)
	}
	return n, nil
}

// loadProgress reports a load on stderr: a byte bar on a terminal, lines
// at most once a second with --progress, nothing otherwise.
type loadProgress struct {
	bar   *progressbar.ProgressBar
	lines io.Writer
	size  int64
	start time.Time
	last  time.Time
}

func newLoadProgress(stderr io.Writer, opts matchOptions, size int64) *loadProgress {
	p := &loadProgress{size: size, start: time.Now()}
	switch {
	case opts.quiet:
	case opts.progress:
		p.lines = stderr
	case isTerminal(os.Stderr):
		p.bar = progressbar.NewOptions64(size, progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription("loading "+opts.subs), progressbar.OptionShowBytes(true),
			progressbar.OptionClearOnFinish())
	}
	return p
}

// update reports n subscriptions read, in the first read bytes of the file.
func (p *loadProgress) update(n int, read int64) {
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("loading: %d subscriptions", n))
		p.bar.Set64(read)
	}
	if p.lines != nil && time.Since(p.last) >= time.Second {
		p.last = time.Now()
		fmt.Fprintf(p.lines, "match: loading: %d subscriptions, %.1f of %.1f MB\n", n, mb(read), mb(p.size))
	}
}

// building reports that the file is read and the index is being built.
func (p *loadProgress) building(n int, read int64) {
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("building the index of %d subscriptions", n))
		p.bar.Set64(read)
	}
	if p.lines != nil {
		fmt.Fprintf(p.lines, "match: read %d subscriptions (%.1f MB); building the index\n", n, mb(read))
	}
}

// done reports the end of the load.
func (p *loadProgress) done(n int) {
	if p.lines != nil {
		fmt.Fprintf(p.lines, "match: loaded %d subscriptions in %.1fs\n", n, time.Since(p.start).Seconds())
	}
}

func (p *loadProgress) finish() {
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }
