package sublog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/durable"
)

// writeLog appends n event lines of pubend p (ticks 1..n), syncing every
// 1,000, and closes the log (which writes its mark).
func writeLog(t testing.TB, path string, n int) {
	t.Helper()
	l, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if _, err := l.Event("p", durable.Tick(i), seqEvent(int64(i))); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 0 {
			if _, err := l.Sync(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkAgainstRead checks what Open recovered against a full Read of the
// file as it was before Open (the reference).
func checkAgainstRead(t *testing.T, before []byte, l *Log, rec Recovery) {
	t.Helper()
	ref, err := Read(bytes.NewReader(before))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Lines != len(ref.Entries) || rec.Torn != ref.Torn || !sameCT(l.CT(), ref.CT) || !sameCT(l.Synced(), ref.CT) {
		t.Fatalf("Open: %+v ct %v; Read: %d lines torn %d ct %v", rec, l.CT(), len(ref.Entries), ref.Torn, ref.CT)
	}
	if got, _ := os.ReadFile(l.path); !bytes.Equal(got, before[:ref.Size]) {
		t.Fatalf("file after Open is not the %d bytes of complete lines (%d bytes)", ref.Size, len(got))
	}
}

// TestOpenLargeLogReadsOnlyPastTheMark: a log of 50,000 lines reopens
// without checking any of them; lines synced after the mark and a torn
// line (a crash, no Close) are the only bytes checked, the torn line is
// cut as before, and the checkpoint and line count are those of a full
// read.
func TestOpenLargeLogReadsOnlyPastTheMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub.log")
	const n = 50_000
	writeLog(t, path, n)
	before, _ := os.ReadFile(path)
	l, rec := openT(t, path)
	checkAgainstRead(t, before, l, rec)
	if rec.Checked != 0 || rec.Lines != n {
		t.Fatalf("reopen of a closed log of %d bytes: %+v, want nothing checked", len(before), rec)
	}
	// Ten more lines synced, then a crash in the middle of a write.
	for i := n + 1; i <= n+10; i++ {
		l.Event("p", durable.Tick(i), seqEvent(int64(i)))
	}
	if _, err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	tail := int64(len(before))
	l.f.Write([]byte(`{"pubend":"p","tick":50011,"ev`))
	l.f.Close()
	before, _ = os.ReadFile(path)
	l, rec = openT(t, path)
	defer l.Close()
	checkAgainstRead(t, before, l, rec)
	past := int64(len(before)) - rec.Torn - tail // the 10 lines past the mark
	if rec.Checked != past || rec.Torn == 0 || rec.Lines != n+10 {
		t.Fatalf("reopen after a crash: %+v, want the 10 lines past the mark (%d bytes) checked and a torn line cut", rec, past)
	}
}

// TestOpenIgnoresAMarkThatDoesNotFit: a log cut below its mark, a log
// replaced by another one, and a garbled mark are all read in full, and
// recover what a full read finds.
func TestOpenIgnoresAMarkThatDoesNotFit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string, full []byte)
	}{
		{"cut below the mark", func(t *testing.T, path string, full []byte) {
			os.WriteFile(path, full[:len(full)-10], 0o644)
		}},
		{"cut at a line end below the mark", func(t *testing.T, path string, full []byte) {
			os.WriteFile(path, full[:bytes.LastIndexByte(full[:len(full)-1], '\n')+1], 0o644)
		}},
		{"replaced by a longer log", func(t *testing.T, path string, full []byte) {
			other := filepath.Join(t.TempDir(), "other.log")
			writeLog(t, other, 2_500)
			data, _ := os.ReadFile(other)
			data = bytes.ReplaceAll(data, []byte(`"seq"`), []byte(`"SEQ"`))
			os.WriteFile(path, data, 0o644)
		}},
		{"garbled mark", func(t *testing.T, path string, full []byte) {
			os.WriteFile(MarkPath(path), []byte(`{"size":`), 0o644)
		}},
		{"mark for another size", func(t *testing.T, path string, full []byte) {
			m, _ := os.ReadFile(MarkPath(path))
			os.WriteFile(MarkPath(path), bytes.Replace(m, []byte(fmt.Sprintf(`"size":%d`, len(full))),
				[]byte(fmt.Sprintf(`"size":%d`, len(full)-1)), 1), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub.log")
			writeLog(t, path, 2_000)
			full, _ := os.ReadFile(path)
			tc.change(t, path, full)
			before, _ := os.ReadFile(path)
			l, rec := openT(t, path)
			defer l.Close()
			checkAgainstRead(t, before, l, rec)
			if rec.Checked != int64(len(before))-rec.Torn {
				t.Fatalf("%+v: want all %d bytes of complete lines checked", rec, int64(len(before))-rec.Torn)
			}
		})
	}
}

// TestOpenRefusesCorruptionPastTheMark: a bad line after the marked
// prefix is refused with its line and byte in the whole file, and
// neither the log nor its mark changes.
func TestOpenRefusesCorruptionPastTheMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub.log")
	writeLog(t, path, 3)
	full, _ := os.ReadFile(path)
	markBefore, _ := os.ReadFile(MarkPath(path))
	bad := append(append([]byte{}, full...), "{\"pubend\":\"p\",\"tick\":2,\"event\":{\"seq\":2}}\n"...)
	os.WriteFile(path, bad, 0o644)
	_, _, err := Open(path)
	want := fmt.Sprintf("line 4 (byte %d): event at tick 2 of p is not above the checkpoint 3", len(full))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open = %v, want an error containing %q", err, want)
	}
	if data, _ := os.ReadFile(path); !bytes.Equal(data, bad) {
		t.Fatal("refused log changed")
	}
	if m, _ := os.ReadFile(MarkPath(path)); !bytes.Equal(m, markBefore) {
		t.Fatalf("mark changed: %s -> %s", markBefore, m)
	}
}

// TestEmptyLogHasNoMark: a log without complete lines leaves no mark, and
// removes a mark left by a log deleted before it.
func TestEmptyLogHasNoMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub.log")
	writeLog(t, path, 5)
	os.Remove(path)
	l, rec := openT(t, path)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(MarkPath(path)); !os.IsNotExist(err) || rec.Lines != 0 {
		t.Fatalf("empty log: %+v, mark: %v", rec, err)
	}
}

// BenchmarkOpen reopens a closed log: with the mark, the time does not
// grow with the number of lines.
func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "sub.log")
			writeLog(b, path, n)
			for b.Loop() {
				l, _, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				l.f.Close()
			}
		})
	}
}

// TestOpenSurvivesUnwritableMark: the mark is a cache, so a mark that
// cannot be written (here its temporary file's name is taken by a
// folder) does not stop Open: the log opens with the checkpoint of a full
// read, the failure is reported in Recovery.MarkErr, and the log can be
// appended to and reopened.
func TestOpenSurvivesUnwritableMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub.log")
	writeLog(t, path, 30)
	if err := os.Remove(MarkPath(path)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(MarkPath(path)+".tmp", 0o755); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	l, rec, err := Open(path)
	if err != nil {
		t.Fatalf("Open failed for want of a mark: %v", err)
	}
	if !errors.Is(rec.MarkErr, ErrMark) {
		t.Fatalf("the mark was not written, but Recovery.MarkErr is %v", rec.MarkErr)
	}
	checkAgainstRead(t, before, l, rec)
	if _, err := l.Event("p", 31, seqEvent(31)); err != nil {
		t.Fatal(err)
	}
	if ct, err := l.Sync(); err != nil || ct["p"] != 31 {
		t.Fatalf("Sync: %v, %v", ct, err)
	}
	if err := l.Close(); !errors.Is(err, ErrMark) {
		t.Fatalf("Close of a log whose mark cannot be written: %v, want an error wrapping ErrMark", err)
	}
	if err := os.Remove(MarkPath(path) + ".tmp"); err != nil {
		t.Fatal(err)
	}
	l, rec = openT(t, path)
	defer l.Close()
	if rec.MarkErr != nil || rec.Lines != 31 || l.CT()["p"] != 31 {
		t.Fatalf("reopen: %+v, ct %v", rec, l.CT())
	}
}
