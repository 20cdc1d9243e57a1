package main

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"

	"github.com/sift-pubsub/sift/bench"
)

// benchBar is the progress bar of a long benchmark command, on stderr.
// A nil *benchBar (quiet, or stderr not a terminal) ignores every call.
type benchBar struct{ bar *progressbar.ProgressBar }

// newBenchBar returns a bar titled name, or nil when quiet or when stderr
// is not a terminal.
func newBenchBar(stderr io.Writer, quiet bool, name string) *benchBar {
	if quiet || !isTerminal(os.Stderr) {
		return nil
	}
	return &benchBar{progressbar.NewOptions(-1, progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription(name), progressbar.OptionShowCount(),
		progressbar.OptionClearOnFinish())}
}

// update shows done of total steps, and desc when it is not empty.
func (b *benchBar) update(done, total int, desc string) {
	if b == nil {
		return
	}
	b.bar.ChangeMax(total)
	if desc != "" {
		b.bar.Describe(desc)
	}
	b.bar.Set(done)
}

// runs returns a callback for bench.Alternate's progress that names the
// system and run starting, after prefix.
func (b *benchBar) runs(prefix string) func(bench.Progress) {
	if b == nil {
		return nil
	}
	return func(p bench.Progress) {
		desc := ""
		if p.System != "" {
			desc = fmt.Sprintf("%srun %d of %s", prefix, p.Run, p.System)
		}
		b.update(p.Done, p.Total, desc)
	}
}

// finish clears the bar.
func (b *benchBar) finish() {
	if b != nil {
		b.bar.Finish()
	}
}
