package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sift-pubsub/sift/internal/sublog"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/client"
)

// TestRecordGroup: a group of durable messages becomes log lines: the
// start token fills in only pubends the log lacks, repeats are dropped
// (and counted as received, so they are acknowledged), silences become
// one ct line at the sync, and the group takes everything waiting.
func TestRecordGroup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub.jsonl")
	os.WriteFile(path, []byte("{\"pubend\":\"p\",\"tick\":5,\"event\":{\"seq\":1}}\n"), 0o644)
	log, _, err := sublog.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	ev := func(seq int64) match.Event { return match.MustEvent(match.Attr{Name: "seq", Value: match.Int(seq)}) }
	msgs := make(chan client.DurableMessage, 8)
	for _, m := range []client.DurableMessage{
		{Kind: client.DurableEvent, Pubend: "p", Tick: 5, Event: ev(1)}, // a repeat
		{Kind: client.DurableEvent, Pubend: "p", Tick: 7, Event: ev(2)},
		{Kind: client.DurableGap, Pubend: "q", From: 3, To: 4},
		{Kind: client.DurableSilence, Pubend: "p", Tick: 9},
	} {
		msgs <- m
	}
	first := client.DurableMessage{Kind: client.DurableStart, CT: client.CT{"p": 2, "q": 2}}
	g, err := recordGroup(log, first, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if g != (group{logged: 1, received: 3, open: true}) || len(msgs) != 0 {
		t.Fatalf("group %+v, %d left waiting", g, len(msgs))
	}
	if _, err := log.Sync(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := `{"pubend":"p","tick":5,"event":{"seq":1}}
{"pubend":"p","tick":7,"event":{"seq":2}}
{"pubend":"q","gap":[3,4]}
{"ct":{"p":9,"q":4}}
`
	if string(data) != want {
		t.Fatalf("log:\n%s\nwant:\n%s", data, want)
	}
	close(msgs)
	if g, err := recordGroup(log, client.DurableMessage{Kind: client.DurableSilence, Pubend: "p", Tick: 10}, msgs); err != nil || g.open {
		t.Fatalf("a closed channel: %+v %v", g, err)
	}
}
