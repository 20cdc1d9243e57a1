package sublog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
)

func seqEvent(i int64) match.Event { return ev(match.Attr{Name: "seq", Value: match.Int(i)}) }

func openT(t *testing.T, path string) (*Log, Recovery) {
	t.Helper()
	l, rec, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return l, rec
}

func sameCT(a, b durable.CT) bool {
	return Entry{Kind: KindCT, CT: a}.Equal(Entry{Kind: KindCT, CT: b})
}

// TestLogWritesAndRecovers appends every kind of message, checks the file
// only changes at Sync, and reopens it to the same checkpoint.
func TestLogWritesAndRecovers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub.log")
	l, rec := openT(t, path)
	if rec.Lines != 0 || len(l.CT()) != 0 {
		t.Fatalf("new log: %+v ct %v", rec, l.CT())
	}
	mustAppend := func(ok bool, err error) {
		t.Helper()
		if err != nil || !ok {
			t.Fatalf("append: %v %v", ok, err)
		}
	}
	mustAppend(l.Event("a", 10, seqEvent(1)))
	mustAppend(l.Silence("b", 7))
	mustAppend(l.Gap("b", 8, 12))
	mustAppend(l.Silence("a", 15))
	if data, _ := os.ReadFile(path); len(data) != 0 {
		t.Fatalf("file written before Sync: %q", data)
	}
	ct, err := l.Sync()
	if err != nil {
		t.Fatal(err)
	}
	want := durable.CT{"a": 15, "b": 12}
	if !sameCT(ct, want) {
		t.Fatalf("Sync = %v, want %v", ct, want)
	}
	data, _ := os.ReadFile(path)
	wantFile := `{"pubend":"a","tick":10,"event":{"seq":1}}
{"pubend":"b","gap":[8,12]}
{"ct":{"a":15,"b":12}}
`
	if string(data) != wantFile {
		t.Fatalf("file:\n%s\nwant:\n%s", data, wantFile)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, rec = openT(t, path)
	defer l.Close()
	if rec.Lines != 3 || rec.Torn != 0 || !sameCT(l.CT(), want) || !sameCT(l.Synced(), want) {
		t.Fatalf("reopen: %+v ct %v, want 3 lines and %v", rec, l.CT(), want)
	}
}

// TestLogDiscardsRepeats: messages at or below the checkpoint are dropped,
// a gap overlapping it is trimmed, a silence that does not raise it writes
// nothing.
func TestLogDiscardsRepeats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub.log")
	l, _ := openT(t, path)
	defer l.Close()
	l.Event("p", 5, seqEvent(5))
	for _, f := range []func() (bool, error){
		func() (bool, error) { return l.Event("p", 5, seqEvent(5)) },
		func() (bool, error) { return l.Event("p", 3, seqEvent(3)) },
		func() (bool, error) { return l.Gap("p", 1, 5) },
		func() (bool, error) { return l.Silence("p", 4) },
	} {
		if ok, err := f(); ok || err != nil {
			t.Fatalf("repeat appended: %v %v", ok, err)
		}
	}
	if ok, err := l.Gap("p", 2, 9); !ok || err != nil {
		t.Fatalf("overlapping gap: %v %v", ok, err)
	}
	l.Sync()
	data, _ := os.ReadFile(path)
	want := "{\"pubend\":\"p\",\"tick\":5,\"event\":{\"seq\":5}}\n{\"pubend\":\"p\",\"gap\":[6,9]}\n"
	if string(data) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
	if _, err := l.Silence("", 3); err == nil {
		t.Fatal("silence of an empty pubend name accepted")
	}
	if _, err := l.Event("", 3, seqEvent(1)); err == nil {
		t.Fatal("event of an empty pubend name accepted")
	}
}

// TestOpenTruncatesTornLine: an unterminated last line is cut off and the
// checkpoint is that of the complete lines.
func TestOpenTruncatesTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub.log")
	good := "{\"pubend\":\"p\",\"tick\":5,\"event\":{\"seq\":5}}\n"
	os.WriteFile(path, []byte(good+`{"pubend":"p","tick":9,"ev`), 0o644)
	l, rec := openT(t, path)
	if rec.Lines != 1 || rec.Torn != int64(len(`{"pubend":"p","tick":9,"ev`)) || !sameCT(l.CT(), durable.CT{"p": 5}) {
		t.Fatalf("recovery %+v ct %v", rec, l.CT())
	}
	l.Event("p", 9, seqEvent(9))
	l.Close()
	data, _ := os.ReadFile(path)
	if want := good + "{\"pubend\":\"p\",\"tick\":9,\"event\":{\"seq\":9}}\n"; string(data) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
}

// TestOpenRefusesCorruption: a bad complete line, or one that goes back,
// is an error naming the line, and the file is left as it was.
func TestOpenRefusesCorruption(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"garbage", "{\"pubend\":\"p\",\"tick\":5,\"event\":{\"seq\":5}}\nxx\n{\"ct\":{\"p\":7}}\n", "line 2 (byte 42): invalid JSON"},
		{"duplicate", "{\"pubend\":\"p\",\"tick\":5,\"event\":{\"seq\":5}}\n{\"pubend\":\"p\",\"tick\":5,\"event\":{\"seq\":5}}\n", "line 2 (byte 42): event at tick 5 of p is not above the checkpoint 5"},
		{"ct back", "{\"ct\":{\"p\":7}}\n{\"ct\":{\"p\":6}}\n", "line 2 (byte 15): ct of p goes back from 7 to 6"},
		{"gap back", "{\"ct\":{\"p\":7}}\n{\"pubend\":\"p\",\"gap\":[7,9]}\n", "line 2 (byte 15): gap [7,9] of p does not start above the checkpoint 7"},
		{"torn in the middle", "{\"ct\":{\"p\":7}\n{\"ct\":{\"p\":8}}\n", "line 1 (byte 0): invalid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub.log")
			os.WriteFile(path, []byte(tc.content+"{\"ct\":"), 0o644)
			_, _, err := Open(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v, want an error containing %q", err, tc.want)
			}
			if data, _ := os.ReadFile(path); string(data) != tc.content+"{\"ct\":" {
				t.Fatalf("refused file changed: %q", data)
			}
		})
	}
}

// TestSyncWritesNothingWhenIdle: Sync without appends leaves the file.
func TestSyncWritesNothingWhenIdle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub.log")
	l, _ := openT(t, path)
	defer l.Close()
	l.Silence("p", 3)
	if l.Buffered() != 0 || !l.Pending() {
		t.Fatalf("a pending silence: Buffered %d Pending %v", l.Buffered(), l.Pending())
	}
	l.Sync()
	before, _ := os.ReadFile(path)
	for range 3 {
		if ct, err := l.Sync(); err != nil || !sameCT(ct, durable.CT{"p": 3}) {
			t.Fatalf("idle Sync = %v %v", ct, err)
		}
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) || l.Pending() {
		t.Fatalf("idle Sync wrote: %q -> %q", before, after)
	}
}

// TestOpenMissingDirectory is a clear error.
func TestOpenMissingDirectory(t *testing.T) {
	_, _, err := Open(filepath.Join(t.TempDir(), "no", "sub.log"))
	if err == nil || !strings.Contains(err.Error(), "open log") {
		t.Fatalf("Open = %v", err)
	}
}
