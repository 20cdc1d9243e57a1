package main

import (
	"bufio"
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
			return runMatch(cmd.OutOrStdout(), cmd.ErrOrStderr(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.subs, "subs", "", "subscriptions file")
	cmd.Flags().StringVar(&opts.events, "events", "", "events file (JSON Lines)")
	cmd.Flags().StringVar(&opts.index, "index", "fast", "matching index (see --list-indexes)")
	cmd.Flags().BoolVar(&opts.list, "list-indexes", false, "print the index names, one per line")
	cmd.Flags().BoolVar(&opts.raw, "raw", false, "print an approximate index's candidates without the exact re-check")
	rootCmd.AddCommand(cmd)
}

type matchOptions struct {
	subs, events, index string
	list, raw           bool
}

func runMatch(stdout, stderr io.Writer, opts matchOptions) error {
	if opts.subs == "" || opts.events == "" {
		return errors.New("match: --subs and --events are required")
	}
	idx, err := match.NewIndex(opts.index)
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
	filters, err := readSubscriptionsFile(opts.subs)
	if err != nil {
		return err
	}
	ids := make([]match.ID, len(filters))
	for i := range ids {
		ids[i] = match.ID(i)
	}
	if err := match.Load(idx, ids, filters); err != nil {
		return fmt.Errorf("match: load %s: %w", opts.subs, err)
	}
	// Events are read in full before printing, so that a malformed event
	// prints nothing on stdout.
	events, err := readEventsFile(opts.events)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	var matched []match.ID
	var line []byte
	for n, e := range events {
		matched = match.SortIDs(matchFn(e, matched[:0]))
		line = appendMatchLine(line[:0], n, matched)
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("match: write: %w", err)
	}
	if sr, ok := idx.(match.StatsReporter); ok {
		fmt.Fprintln(stderr, sr.Stats())
	}
	return nil
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

func readSubscriptionsFile(path string) ([]match.Filter, error) {
	return readFile(path, match.ReadSubscriptions)
}

func readEventsFile(path string) ([]match.Event, error) {
	return readFile(path, match.ReadEvents)
}

// readFile opens path and reads it with read, locating errors in the file.
func readFile[T any](path string, read func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, fmt.Errorf("match: %w", err)
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		return zero, fileError(path, err)
	}
	return v, nil
}

// fileError prefixes a located error with the file name: FILE:LINE:COL: msg.
func fileError(path string, err error) error {
	var le *match.LineError
	if errors.As(err, &le) {
		return fmt.Errorf("%s:%w", path, le)
	}
	return fmt.Errorf("%s: %w", path, err)
}
