package sublog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseLine: ParseLine never panics, and a line it accepts encodes to
// a canonical line that parses back to the same entry and re-encodes to
// itself.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`{"pubend":"r1","tick":17,"event":{"seq":3,"sym":"a\"b"}}`,
		`{"pubend":"p","gap":[5,9]}`,
		`{"ct":{"a":0,"b":4}}`,
		`{"ct":{}}`,
		`{"pubend":"p","tick":1.5,"event":{"a":1}}`,
		`{"pubend":"p","tick":3,"event":{"a":{"b":1}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ParseLine(line)
		if err != nil {
			return
		}
		canon := bytes.TrimSuffix(AppendLine(nil, e), []byte{'\n'})
		back, err := ParseLine(canon)
		if err != nil {
			t.Fatalf("canonical line %s of %q does not parse: %v", canon, line, err)
		}
		if !back.Equal(e) {
			t.Fatalf("%q -> %+v -> %s -> %+v", line, e, canon, back)
		}
		if again := bytes.TrimSuffix(AppendLine(nil, back), []byte{'\n'}); !bytes.Equal(again, canon) {
			t.Fatalf("not canonical: %s then %s", canon, again)
		}
	})
}

// FuzzRead: Read never panics; what it accepts has increasing ticks per
// pubend and accounts for every byte (complete lines plus the torn tail).
func FuzzRead(f *testing.F) {
	f.Add([]byte("{\"pubend\":\"p\",\"tick\":5,\"event\":{\"seq\":5}}\n{\"ct\":{\"p\":7}}\n{\"pubend\":\"p\",\"gap\":[8,9]}\n{\"ct"))
	f.Add([]byte("{\"ct\":{\"p\":7}}\n{\"ct\":{\"p\":6}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		if c.Size+c.Torn != int64(len(data)) || bytes.Count(data[:c.Size], []byte{'\n'}) != len(c.Entries) {
			t.Fatalf("size %d torn %d lines %d for %d bytes", c.Size, c.Torn, len(c.Entries), len(data))
		}
		if !sameCT(c.CT, refCT(c.Entries)) {
			t.Fatalf("CT %v, reference %v", c.CT, refCT(c.Entries))
		}
	})
}

// FuzzOpenMark: whatever the mark file beside a log holds, Open recovers
// what a full Read of the log finds (a mark is believed only when its sum
// and the log's bytes before the marked size check), and never panics.
func FuzzOpenMark(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.log")
	writeLog(f, path, 20)
	good, err := os.ReadFile(MarkPath(path))
	if err != nil {
		f.Fatal(err)
	}
	log, _ := os.ReadFile(path)
	f.Add(good)
	f.Add(bytes.Replace(good, []byte(`"p":20`), []byte(`"p":99`), 1)) // a damaged checkpoint
	f.Add(bytes.Replace(good, []byte(`"lines":20`), []byte(`"lines":2`), 1))
	f.Add([]byte(`{"size":1,"lines":1,"ct":{"p":9},"tail":"","sum":""}`))
	f.Fuzz(func(t *testing.T, m []byte) {
		path := filepath.Join(t.TempDir(), "sub.log")
		os.WriteFile(path, log, 0o644)
		os.WriteFile(MarkPath(path), m, 0o644)
		l, rec, err := Open(path)
		if err != nil {
			t.Fatalf("Open with mark %q: %v", m, err)
		}
		defer l.Close()
		checkAgainstRead(t, log, l, rec)
	})
}
