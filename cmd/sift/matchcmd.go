package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/sift-pubsub/sift/match"
	"github.com/spf13/cobra"
)

func init() {
	var opts matchOptions
	cmd := &cobra.Command{
		Use:   "match --subs FILE --events FILE [--index NAME]",
		Short: "Match every event of a file against a file of subscriptions",
		Long: `Match reads a subscriptions file (one filter per line; blank lines and
lines starting with # are skipped; ids count the remaining lines from 0) and
an events file (JSON Lines), and prints one line per event, in input order:
{"event":N,"matches":[id,...]} with ids ascending.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.list {
				for _, name := range match.IndexNames() {
					fmt.Fprintln(cmd.OutOrStdout(), name)
				}
				return nil
			}
			return runMatch(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.subs, "subs", "", "subscriptions file")
	cmd.Flags().StringVar(&opts.events, "events", "", "events file (JSON Lines)")
	cmd.Flags().StringVar(&opts.index, "index", "fast", "matching index (see --list-indexes)")
	cmd.Flags().BoolVar(&opts.list, "list-indexes", false, "print the index names, one per line")
	cmd.Flags().BoolVar(&opts.raw, "raw", false, "print an approximate index's candidates without the exact re-check")
	cmd.Flags().BoolVar(&opts.progress, "progress", false, "report loading progress on stderr as lines (a terminal gets a bar anyway)")
	cmd.Flags().BoolVar(&opts.quiet, "quiet", false, "no progress bar on stderr")
	cmd.Flags().IntVar(&opts.fast.MaxCells, "cells", 0, "fast, fast-parallel: cells per attribute dimension (0: by the index's size)")
	cmd.Flags().IntVar(&opts.fast.SegmentSlots, "segment", 0, "fast, fast-parallel: most subscriptions per segment (0: by the index's size)")
	cmd.Flags().BoolVar(&opts.fast.NarrowSlots, "narrow-slots", false, "fast, fast-parallel: 3-byte bound slots at any size (less memory, more CPU)")
	cmd.Flags().BoolVar(&opts.fast.WideSlots, "wide-slots", false, "fast, fast-parallel: 4-byte bound slots at any size (more memory, less CPU)")
	cmd.Flags().IntVar(&opts.expect, "expect", 0, "subscriptions the file holds, to plan the index's layout (0: its lines, counted first)")
	rootCmd.AddCommand(cmd)
}

type matchOptions struct {
	subs, events, index string
	list, raw           bool
	progress, quiet     bool
	fast                match.FastConfig // for fast and fast-parallel
	expect              int              // the load's size hint; 0 counts the lines
}

// newMatchIndex returns the index opts name: fast and fast-parallel with
// the layout flags, others from the registry. The layout flags with any
// other index are an error, not a silent no-op.
func newMatchIndex(opts matchOptions) (match.Index, error) {
	switch opts.index {
	case "fast":
		return match.NewFast(opts.fast), nil
	case "fast-parallel":
		return match.NewParallel(0, opts.fast), nil
	}
	if opts.fast != (match.FastConfig{}) {
		return nil, fmt.Errorf("--cells, --segment, --narrow-slots and --wide-slots are for fast and fast-parallel, not %s", opts.index)
	}
	return match.NewIndex(opts.index)
}

// runMatch loads the subscriptions streaming (an index with its own
// loader never holds the parsed filters), reads the events, and prints the
// matches. A cancelled ctx (Ctrl-C, SIGTERM) stops it between lines or
// events.
func runMatch(ctx context.Context, stdout, stderr io.Writer, opts matchOptions) error {
	if opts.subs == "" || opts.events == "" {
		return errors.New("match: --subs and --events are required")
	}
	if opts.fast.NarrowSlots && opts.fast.WideSlots {
		return errors.New("match: --narrow-slots and --wide-slots exclude each other")
	}
	idx, err := newMatchIndex(opts)
	if err != nil {
		return fmt.Errorf("match: %w", err)
	}
	matchFn := idx.Match
	if opts.raw {
		rm, ok := idx.(match.RawMatcher)
		if !ok {
			return fmt.Errorf("match: --raw: index %s is exact; it has no raw candidates", opts.index)
		}
		matchFn = rm.MatchRaw
	}
	if err := loadSubscriptionsFile(ctx, idx, opts, stderr); err != nil {
		return err
	}
	// Events are read in full before printing, so that a malformed event
	// prints nothing on stdout.
	events, err := readEventsCtx(ctx, opts.events)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	var matched [][]match.ID
	var line []byte
	for start := 0; start < len(events); start += matchBatch {
		if err := ctx.Err(); err != nil {
			w.Flush()
			return err
		}
		block := events[start:min(start+matchBatch, len(events))]
		for i := range matched {
			matched[i] = matched[i][:0]
		}
		if opts.raw {
			matched = growIDs(matched, len(block))
			for i, e := range block {
				matched[i] = matchFn(e, matched[i])
			}
		} else {
			matched = match.MatchBatch(idx, block, matched)
		}
		for i, ids := range matched[:len(block)] {
			line = appendMatchLine(line[:0], start+i, match.SortIDs(ids))
			w.Write(line)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("match: write: %w", err)
	}
	if sr, ok := idx.(match.StatsReporter); ok {
		fmt.Fprintln(stderr, sr.Stats())
	}
	return nil
}

// matchBatch is how many events sift match hands the index at once: a
// match.BatchMatcher (fast-parallel) spreads each batch over the cores
// with one handoff.
const matchBatch = 256

// growIDs returns ids with at least n entries.
func growIDs(ids [][]match.ID, n int) [][]match.ID {
	for len(ids) < n {
		ids = append(ids, nil)
	}
	return ids
}

// appendMatchLine formats {"event":N,"matches":[id,...]}\n.
func appendMatchLine(b []byte, n int, ids []match.ID) []byte {
	b = append(b, `{"event":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `,"matches":[`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(id), 10)
	}
	return append(b, "]}\n"...)
}

// checkEvery is how many lines or events pass between checks for a
// cancelled context.
const checkEvery = 1024

// readEventsCtx reads a whole events file, stopping when ctx is cancelled.
func readEventsCtx(ctx context.Context, path string) ([]match.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("match: %w", err)
	}
	defer f.Close()
	r := match.NewEventReader(f)
	var events []match.Event
	for n := 1; ; n++ {
		if n%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return events, nil
		}
		if err != nil {
			return nil, fileError(path, err)
		}
		events = append(events, e)
	}
}

// fileError prefixes a located error with the file name: FILE:LINE:COL: msg.
func fileError(path string, err error) error {
	var le *match.LineError
	if errors.As(err, &le) {
		return fmt.Errorf("%s:%w", path, le)
	}
	return fmt.Errorf("%s: %w", path, err)
}
