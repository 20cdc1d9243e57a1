package sublog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
)

// Log is an open log file being appended to. It is not safe for
// concurrent use.
type Log struct {
	f      *os.File
	path   string
	ct     durable.CT // everything appended, synced or not
	synced durable.CT // what the file holds durably
	lines  int        // complete lines the file holds
	size   int64      // bytes the file holds
	marked int64      // bytes the mark on disk vouches for (0: none)
	buf    []byte     // lines appended since the last Sync
	nbuf   int        // how many
	silent bool       // ct advanced by silence since the last line
	err    error      // a failed write: the log is unusable
}

// Recovery says what Open found.
type Recovery struct {
	Lines int   // complete lines
	Torn  int64 // bytes of a torn last line, truncated
	// Checked is the bytes of complete lines Open read and checked: those
	// after the prefix the log's mark vouched for (all of them without a
	// usable mark).
	Checked int64
	// MarkErr is why Open could not write the log's mark (nil: written,
	// or the mark on disk vouched for the whole file already). The mark
	// is a cache: the log is open and sound all the same, and the next
	// Open reads every line past the older mark, if any.
	MarkErr error
}

// Open opens (or creates) the log at path and rebuilds its checkpoint
// from the mark beside it (see MarkPath) and the lines after the marked
// prefix (every line without a usable mark). A torn last line is
// truncated and the truncation synced; a corrupt line is an error and the
// file is left as it was. Once the log is synced Open writes its mark; a
// mark that cannot be written does not fail Open (see Recovery.MarkErr).
func Open(path string) (*Log, Recovery, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, Recovery{}, fmt.Errorf("open log: %w", err)
	}
	l, rec, err := recoverFile(f, path)
	if err != nil {
		f.Close()
		return nil, Recovery{}, err
	}
	return l, rec, nil
}

func recoverFile(f *os.File, path string) (*Log, Recovery, error) {
	marked := markedPrefix(f, path)
	if _, err := f.Seek(marked.size, io.SeekStart); err != nil {
		return nil, Recovery{}, fmt.Errorf("log %s: %w", path, err)
	}
	t, err := scan(f, marked, nil)
	if err != nil {
		return nil, Recovery{}, fmt.Errorf("log %s: %w", path, err)
	}
	if t.torn > 0 {
		if err := f.Truncate(t.size); err != nil {
			return nil, Recovery{}, fmt.Errorf("log %s: truncate torn line: %w", path, err)
		}
	}
	if _, err := f.Seek(t.size, io.SeekStart); err != nil {
		return nil, Recovery{}, fmt.Errorf("log %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return nil, Recovery{}, fmt.Errorf("log %s: sync: %w", path, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return nil, Recovery{}, fmt.Errorf("log %s: %w", path, err)
	}
	l := &Log{f: f, path: path, ct: t.ct, synced: t.ct.Clone(), lines: t.lines, size: t.size, marked: marked.size}
	rec := Recovery{Lines: t.lines, Torn: t.torn, Checked: t.size - marked.size}
	rec.MarkErr = l.mark()
	return l, rec, nil
}

// syncDir makes a newly created file's directory entry durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// CT returns the checkpoint of everything appended, synced or not. The
// caller must not modify it.
func (l *Log) CT() durable.CT { return l.ct }

// Synced returns the checkpoint the file holds durably: the one to
// acknowledge. The caller must not modify it.
func (l *Log) Synced() durable.CT { return l.synced }

// Event appends an event line unless tick is at or below the checkpoint of
// pubend (a repeat); it reports whether it appended.
func (l *Log) Event(pubend string, tick durable.Tick, e match.Event) (bool, error) {
	return l.append(Entry{Kind: KindEvent, Pubend: pubend, Tick: tick, Event: e})
}

// Gap appends a gap line for [from, to] less the ticks at or below the
// checkpoint of pubend; it reports whether anything was left to append.
func (l *Log) Gap(pubend string, from, to durable.Tick) (bool, error) {
	from = max(from, l.ct[pubend]+1)
	if from > to {
		return false, l.err
	}
	return l.append(Entry{Kind: KindGap, Pubend: pubend, Gap: durable.Range{From: from, To: to}})
}

// Silence raises the checkpoint of pubend to tick (no event up to it);
// the next Sync writes a ct line if any silence raised it. It reports
// whether the checkpoint moved.
func (l *Log) Silence(pubend string, tick durable.Tick) (bool, error) {
	if l.err != nil || tick <= l.ct[pubend] {
		return false, l.err
	}
	if pubend == "" {
		return false, errors.New("silence: empty pubend name")
	}
	l.ct[pubend] = tick
	l.silent = true
	return true, nil
}

// Advance raises the checkpoint to ct where it is higher, as silences do
// (a session's start token names where delivery begins).
func (l *Log) Advance(ct durable.CT) error {
	for _, p := range ct.Pubends() {
		if _, err := l.Silence(p, ct[p]); err != nil {
			return err
		}
	}
	return nil
}

// append validates e against the checkpoint and buffers its line.
func (l *Log) append(e Entry) (bool, error) {
	if l.err != nil {
		return false, l.err
	}
	if e.Kind == KindEvent && e.Tick <= l.ct[e.Pubend] {
		return false, nil
	}
	if e.Pubend == "" {
		return false, fmt.Errorf("%v: empty pubend name", e.Kind)
	}
	if err := apply(l.ct, e); err != nil {
		return false, err
	}
	l.buf = AppendLine(l.buf, e)
	l.nbuf++
	return true, nil
}

// Pending reports whether lines or a silence await Sync.
func (l *Log) Pending() bool { return len(l.buf) > 0 || l.silent }

// Buffered returns the bytes of event and gap lines awaiting Sync (a
// pending silence is not counted: a caller may let silences accumulate
// and sync them less often).
func (l *Log) Buffered() int { return len(l.buf) }

// Sync writes the appended lines (and a ct line if silence raised the
// checkpoint since the last line), fsyncs the file, and returns the
// checkpoint now durable. After a failed write the log refuses further
// use; reopening it truncates the torn line.
func (l *Log) Sync() (durable.CT, error) {
	if l.err != nil {
		return nil, l.err
	}
	if !l.Pending() {
		return l.synced, nil
	}
	if l.silent {
		l.buf = AppendLine(l.buf, Entry{Kind: KindCT, CT: l.ct})
		l.nbuf++
		l.silent = false
	}
	if _, err := l.f.Write(l.buf); err != nil {
		l.err = fmt.Errorf("log %s: write: %w", l.path, err)
		return nil, l.err
	}
	if err := l.f.Sync(); err != nil {
		l.err = fmt.Errorf("log %s: sync: %w", l.path, err)
		return nil, l.err
	}
	l.lines += l.nbuf
	l.size += int64(len(l.buf))
	l.buf, l.nbuf = l.buf[:0], 0
	l.synced = l.ct.Clone()
	return l.synced, nil
}

// ErrMark is wrapped by the errors that concern only a log's mark, a
// cache: the log itself is synced and sound, and the next Open reads the
// lines past the older mark (all of them without one).
var ErrMark = errors.New("mark not written")

// Close syncs what is pending, writes the log's mark and closes the file.
// An error wrapping ErrMark means that everything was synced and closed
// but the mark could not be written.
func (l *Log) Close() error {
	_, err := l.Sync()
	if err == nil {
		err = l.mark()
	}
	if cerr := l.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("log %s: close: %w", l.path, cerr)
	}
	return err
}

// mark writes the mark of the synced file unless the mark on disk already
// vouches for all of it. Only call it when nothing is pending.
func (l *Log) mark() error {
	if l.marked > 0 && l.marked == l.size {
		return nil
	}
	if err := writeMark(l.f, l.path, tally{ct: l.synced, lines: l.lines, size: l.size}); err != nil {
		return fmt.Errorf("log %s: %w: %w", l.path, ErrMark, err)
	}
	l.marked = l.size
	return nil
}

// String names a kind.
func (k Kind) String() string {
	switch k {
	case KindEvent:
		return "event"
	case KindGap:
		return "gap"
	case KindCT:
		return "ct"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}
