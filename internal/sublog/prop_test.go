package sublog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/durable"
	"pgregory.net/rapid"
)

var pubends = []string{"p", "q", "r"}

// refCT is the checkpoint of entries by the definition in the package
// doc: per pubend, the highest tick the lines name.
func refCT(es []Entry) durable.CT {
	ct := durable.CT{}
	raise := func(p string, t durable.Tick) { ct[p] = max(ct[p], t) }
	for _, e := range es {
		switch e.Kind {
		case KindEvent:
			raise(e.Pubend, e.Tick)
		case KindGap:
			raise(e.Pubend, e.Gap.To)
		case KindCT:
			for p, t := range e.CT {
				raise(p, t)
			}
		}
	}
	return ct
}

// writeRandom drives a log with random messages (repeats included) and
// syncs, and returns the entries it reported appending.
func writeRandom(t *rapid.T, l *Log) {
	n := rapid.IntRange(0, 60).Draw(t, "ops")
	for i := range n {
		p := rapid.SampledFrom(pubends).Draw(t, "pubend")
		tick := durable.Tick(rapid.IntRange(1, 80).Draw(t, "tick"))
		var err error
		switch rapid.IntRange(0, 4).Draw(t, "op") {
		case 0, 1:
			_, err = l.Event(p, tick, seqEvent(int64(i)))
		case 2:
			_, err = l.Gap(p, tick, tick+durable.Tick(rapid.IntRange(0, 5).Draw(t, "len")))
		case 3:
			_, err = l.Silence(p, tick)
		case 4:
			_, err = l.Sync()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestCrashAtAnyByte: write a random log, cut the file at a random byte
// (a crash at any point of any write), reopen. The checkpoint is that of
// the complete lines before the cut, the file is exactly those lines, and
// per pubend the ticks strictly increase.
func TestCrashAtAnyByte(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		path := filepath.Join(dir, fmt.Sprintf("crash-%d.log", rapid.Int().Draw(t, "file")))
		defer os.Remove(path)
		l, _, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		writeRandom(t, l)
		l.Close()
		full, _ := os.ReadFile(path)
		all, err := Read(bytes.NewReader(full))
		if err != nil {
			t.Fatalf("log as written does not read back: %v", err)
		}
		checkIncreasing(t, all.Entries)
		if !sameCT(all.CT, refCT(all.Entries)) {
			t.Fatalf("Read CT %v, reference %v", all.CT, refCT(all.Entries))
		}
		cut := rapid.IntRange(0, len(full)).Draw(t, "cut")
		os.WriteFile(path, full[:cut], 0o644)
		complete := full[:bytes.LastIndexByte(full[:cut], '\n')+1]
		nlines := bytes.Count(complete, []byte{'\n'})

		l, rec, err := Open(path)
		if err != nil {
			t.Fatalf("reopen after cut at %d: %v", cut, err)
		}
		defer l.Close()
		if want := refCT(all.Entries[:nlines]); !sameCT(l.CT(), want) {
			t.Fatalf("cut at %d: CT %v, want %v", cut, l.CT(), want)
		}
		if rec.Lines != nlines || rec.Torn != int64(cut-len(complete)) {
			t.Fatalf("cut at %d: recovery %+v, want %d lines %d torn", cut, rec, nlines, cut-len(complete))
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, complete) {
			t.Fatalf("cut at %d: file after Open is not the complete lines", cut)
		}
	})
}

func checkIncreasing(t *rapid.T, es []Entry) {
	last := durable.CT{}
	for i, e := range es {
		if err := apply(last, e); err != nil {
			t.Fatalf("entry %d %v: %v", i, e, err)
		}
	}
}

// source is an SHB's view of one subscription: per pubend, the matching
// ticks (each carrying an event) and released stretches, to be sent in
// tick order from any checkpoint, as sessions do after a resume.
type source struct {
	msgs map[string][]Entry // per pubend, in tick order: events and gaps
}

func drawSource(t *rapid.T) source {
	s := source{msgs: map[string][]Entry{}}
	for _, p := range pubends {
		var tick durable.Tick
		for i := range rapid.IntRange(0, 30).Draw(t, "len "+p) {
			tick += durable.Tick(rapid.IntRange(1, 4).Draw(t, "step"))
			if rapid.IntRange(0, 9).Draw(t, "gap?") == 0 {
				to := tick + durable.Tick(rapid.IntRange(0, 3).Draw(t, "gap len"))
				s.msgs[p] = append(s.msgs[p], Entry{Kind: KindGap, Pubend: p, Gap: durable.Range{From: tick, To: to}})
				tick = to
				continue
			}
			s.msgs[p] = append(s.msgs[p], Entry{Kind: KindEvent, Pubend: p, Tick: tick, Event: seqEvent(int64(i))})
		}
	}
	return s
}

// after returns the messages of p whose ticks lie above ct, with a gap
// straddling ct cut down as the SHB's catch-up does.
func (s source) after(p string, ct durable.Tick) []Entry {
	var out []Entry
	for _, m := range s.msgs[p] {
		switch {
		case m.Kind == KindEvent && m.Tick > ct:
			out = append(out, m)
		case m.Kind == KindGap && m.Gap.To > ct:
			m.Gap.From = max(m.Gap.From, ct+1)
			out = append(out, m)
		}
	}
	return out
}

// TestResumeExactlyOnce: a subscriber consumes sessions from a source,
// syncing at random and crashing at random (the file cut at a random byte
// past what it had synced: unsynced data may be lost). Each session
// resumes from a checkpoint at or below what the file holds (the SHB's
// record of the last acknowledgement, or the file's own) and repeats
// messages from there. In the end the file holds each message of the
// source exactly once, in order.
func TestResumeExactlyOnce(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		path := filepath.Join(dir, fmt.Sprintf("resume-%d.log", rapid.Int().Draw(t, "file")))
		defer os.Remove(path)
		src := drawSource(t)
		acked := durable.CT{} // the SHB's released(s,p)
		for session := 0; ; session++ {
			l, _, err := Open(path)
			if err != nil {
				t.Fatalf("session %d: %v", session, err)
			}
			from := l.CT().Clone()
			if rapid.Bool().Draw(t, "resume from the acknowledgement") {
				from = acked.Clone()
			}
			queue := interleave(t, src, from)
			crashAt := rapid.IntRange(0, len(queue)+1).Draw(t, "crash at")
			for i, m := range queue {
				if i == crashAt {
					break
				}
				deliver(t, l, m)
				if rapid.IntRange(0, 3).Draw(t, "sync?") == 0 {
					ct, err := l.Sync()
					if err != nil {
						t.Fatal(err)
					}
					acked = ct.Clone()
				}
			}
			if crashAt > len(queue) {
				if _, err := l.Sync(); err != nil {
					t.Fatal(err)
				}
				l.Close()
				break
			}
			crash(t, l, path)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Read(bytes.NewReader(got))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pubends {
			var mine []Entry
			for _, e := range c.Entries {
				if e.Pubend == p {
					mine = append(mine, e)
				}
			}
			if !slices.EqualFunc(mine, src.msgs[p], Entry.Equal) {
				t.Fatalf("pubend %s: file holds %v, source sent %v", p, mine, src.msgs[p])
			}
		}
	})
}

// interleave merges the per-pubend sequences above from in a random
// order that keeps each pubend's order.
func interleave(t *rapid.T, src source, from durable.CT) []Entry {
	lanes := map[string][]Entry{}
	var live []string
	for _, p := range pubends {
		if ms := src.after(p, from[p]); len(ms) > 0 {
			lanes[p] = ms
			live = append(live, p)
		}
	}
	var out []Entry
	for len(live) > 0 {
		i := rapid.IntRange(0, len(live)-1).Draw(t, "lane")
		p := live[i]
		out = append(out, lanes[p][0])
		if lanes[p] = lanes[p][1:]; len(lanes[p]) == 0 {
			live = slices.Delete(live, i, i+1)
		}
	}
	return out
}

func deliver(t *rapid.T, l *Log, m Entry) {
	var err error
	switch m.Kind {
	case KindEvent:
		_, err = l.Event(m.Pubend, m.Tick, m.Event)
	case KindGap:
		_, err = l.Gap(m.Pubend, m.Gap.From, m.Gap.To)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// crash drops the log without syncing and cuts the file somewhere past
// the synced lines: what a power loss can leave of unsynced writes. Half
// the time the pending lines were written (not synced) first.
func crash(t *rapid.T, l *Log, path string) {
	synced, _ := os.Stat(path)
	if rapid.Bool().Draw(t, "written before the crash") {
		l.f.Write(l.buf)
	}
	l.f.Close()
	full, _ := os.ReadFile(path)
	cut := rapid.IntRange(int(synced.Size()), len(full)).Draw(t, "cut")
	os.WriteFile(path, full[:cut], 0o644)
}
