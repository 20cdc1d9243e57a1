package sublog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/sift-pubsub/sift/durable"
)

// Contents is what a log file holds.
type Contents struct {
	Entries []Entry    // every complete line, in order
	CT      durable.CT // the checkpoint the lines reach
	Size    int64      // bytes in complete lines
	Torn    int64      // bytes of an unterminated last line (0: none)
}

// Read decodes a log from r: every complete line must parse and lie above
// the checkpoint of the lines before it; a last line without its newline
// is reported as Torn and otherwise ignored. The error names the line
// (counted from 1).
func Read(r io.Reader) (Contents, error) {
	var es []Entry
	t, err := scan(r, tally{ct: durable.CT{}}, func(e Entry) { es = append(es, e) })
	if err != nil {
		return Contents{}, err
	}
	return Contents{Entries: es, CT: t.ct, Size: t.size, Torn: t.torn}, nil
}

// tally is what the lines of a log up to some point amount to.
type tally struct {
	ct    durable.CT // the checkpoint they reach
	lines int        // complete lines
	size  int64      // bytes in complete lines
	torn  int64      // bytes of an unterminated last line (0: none)
}

// scan checks the lines r holds, which follow the complete lines t counts
// (r starts at byte t.size of the file), hands each to keep if it is not
// nil, and returns the tally of the whole file. Errors name the line and
// byte in the whole file.
func scan(r io.Reader, t tally, keep func(Entry)) (tally, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			t.torn = int64(len(line))
			return t, nil
		}
		n := t.lines + 1
		if err != nil {
			return tally{}, fmt.Errorf("read line %d: %w", n, err)
		}
		e, err := ParseLine(bytes.TrimSuffix(line, []byte{'\n'}))
		if err == nil {
			err = apply(t.ct, e)
		}
		if err != nil {
			return tally{}, fmt.Errorf("line %d (byte %d): %w", n, t.size, err)
		}
		if keep != nil {
			keep(e)
		}
		t.lines = n
		t.size += int64(len(line))
	}
}
