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
	c := Contents{CT: durable.CT{}}
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			c.Torn = int64(len(line))
			return c, nil
		}
		if err != nil {
			return Contents{}, fmt.Errorf("read line %d: %w", n, err)
		}
		e, err := ParseLine(bytes.TrimSuffix(line, []byte{'\n'}))
		if err == nil {
			err = apply(c.CT, e)
		}
		if err != nil {
			return Contents{}, fmt.Errorf("line %d (byte %d): %w", n, c.Size, err)
		}
		c.Entries = append(c.Entries, e)
		c.Size += int64(len(line))
	}
}
