package sublog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sift-pubsub/sift/durable"
)

// A mark vouches for a prefix of a log: Open (after recovery) and Close
// write it beside the log, at MarkPath, once the log is synced, so it
// only ever describes complete, checked, synced lines. The next Open
// checks only the lines after a mark that still fits the file, which
// makes opening cost independent of the log's length. A mark is a cache:
// without one, or with one that is damaged or does not fit (the file is
// shorter, or its bytes before the marked size are not the ones marked),
// Open reads the whole file as before.
type mark struct {
	Size  int64      `json:"size"`  // bytes of complete lines vouched for
	Lines int        `json:"lines"` // how many lines they are
	CT    durable.CT `json:"ct"`    // the checkpoint they reach
	// Tail is the SHA-256 of the markTail bytes before Size, so a file
	// replaced or rewritten since is not taken for the one marked.
	Tail string `json:"tail"`
	// Sum is the SHA-256 of the mark's JSON with Sum empty, so a mark
	// damaged on disk is not believed.
	Sum string `json:"sum"`
}

// sum returns the digest of m's fields other than Sum.
func (m mark) sum() string {
	m.Sum = ""
	data, err := json.Marshal(m)
	if err != nil {
		panic(err) // a mark always marshals
	}
	d := sha256.Sum256(data)
	return hex.EncodeToString(d[:])
}

// markTail is how many bytes before a mark's size its digest covers.
const markTail = 4096

// MarkPath returns where the mark of the log at path lives.
func MarkPath(path string) string { return path + ".mark" }

// markedPrefix returns the tally of the prefix of f that the mark beside
// path vouches for, or an empty tally when there is no mark that fits f.
func markedPrefix(f *os.File, path string) tally {
	none := tally{ct: durable.CT{}}
	data, err := os.ReadFile(MarkPath(path))
	if err != nil {
		return none
	}
	var m mark
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if dec.Decode(&m) != nil || m.Sum != m.sum() || m.Size <= 0 || m.Lines <= 0 || int64(m.Lines) > m.Size || m.CT == nil {
		return none
	}
	for p, t := range m.CT {
		if p == "" || t < 0 {
			return none
		}
	}
	if d, err := tailDigest(f, m.Size); err != nil || d != m.Tail {
		return none // shorter than the mark, or not the file marked
	}
	return tally{ct: m.CT, lines: m.Lines, size: m.Size}
}

// tailDigest returns the digest of the markTail bytes of f before size,
// which must end with a newline (the end of a complete line).
func tailDigest(f *os.File, size int64) (string, error) {
	n := min(size, markTail)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil {
		return "", err
	}
	if n == 0 || buf[n-1] != '\n' {
		return "", errors.New("the marked size does not end a line")
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:]), nil
}

// writeMark records that the synced prefix t of f checks: it writes the
// mark to a temporary file, syncs it, renames it over the old mark and
// syncs the directory, so a crash leaves the old mark or the new one. A
// log with no complete line gets no mark (an old one is removed).
func writeMark(f *os.File, path string, t tally) error {
	if t.lines == 0 {
		if err := os.Remove(MarkPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove mark: %w", err)
		}
		return nil
	}
	d, err := tailDigest(f, t.size)
	if err != nil {
		return fmt.Errorf("mark: %w", err)
	}
	m := mark{Size: t.size, Lines: t.lines, CT: t.ct, Tail: d}
	m.Sum = m.sum()
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("mark: %w", err)
	}
	tmp := MarkPath(path) + ".tmp"
	if err := writeSynced(tmp, data); err != nil {
		return fmt.Errorf("write mark: %w", err)
	}
	if err := os.Rename(tmp, MarkPath(path)); err != nil {
		return fmt.Errorf("write mark: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

// writeSynced creates (or truncates) the file at path, writes data and
// syncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
