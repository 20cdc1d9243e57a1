package durable

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestHostTakeJoins: Take's batch and messages are, in order, every
// broker's writes, its early messages (and, without writes, its other
// messages after all the early ones) and, held for the sync, its other
// messages: the reference concatenates them. When one broker alone has
// messages (or writes) of a kind, Take hands that broker's slice on as it
// is, without copying it. Fails with Take copying every part into a new
// slice (the sharing check) and with a part dropped or reordered.
func TestHostTakeJoins(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 4).Draw(t, "brokers")
		var brokers []Broker
		var readies []Ready
		seq := 0
		envs := func(label string) []Envelope {
			var out []Envelope
			for range rapid.IntRange(0, 3).Draw(t, label) {
				seq++
				out = append(out, msg(fmt.Sprint(seq)))
			}
			return out
		}
		for i := range n {
			rd := Ready{Early: envs(fmt.Sprintf("early%d", i)), Msgs: envs(fmt.Sprintf("msgs%d", i))}
			for range rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("writes%d", i)) {
				if rd.Writes == nil {
					rd.Writes = &Batch{}
				}
				seq++
				rd.Writes.Set([]byte(fmt.Sprint(seq)), nil)
			}
			readies = append(readies, rd)
			brokers = append(brokers, &fakeBroker{readies: []Ready{rd}})
		}
		var wantOps []Op
		var wantEarly, wantMsgs [][]Envelope
		for _, rd := range readies {
			if rd.Writes != nil {
				wantOps = append(wantOps, rd.Writes.Ops...)
			}
			wantEarly = append(wantEarly, rd.Early)
			wantMsgs = append(wantMsgs, rd.Msgs)
		}
		batch, now := NewHost(brokers...).Take()
		if len(wantOps) == 0 {
			if batch != nil {
				t.Fatalf("a batch without writes: %+v", batch)
			}
			checkJoined(t, "now", now, append(wantEarly, wantMsgs...))
			return
		}
		if batch == nil {
			t.Fatal("no batch for writes")
		}
		if !slices.EqualFunc(batch.Writes.Ops, wantOps, func(a, b Op) bool { return string(a.Key) == string(b.Key) }) {
			t.Fatalf("writes %v, want %v", batch.Writes.Ops, wantOps)
		}
		checkJoined(t, "now", now, wantEarly)
		checkJoined(t, "held", batch.Msgs, wantMsgs)
		var withOps [][]Op
		for _, rd := range readies {
			if rd.Writes != nil && len(rd.Writes.Ops) > 0 {
				withOps = append(withOps, rd.Writes.Ops)
			}
		}
		if len(withOps) == 1 && &batch.Writes.Ops[0] != &withOps[0][0] {
			t.Fatal("the one broker's writes were copied")
		}
	})
}

// checkJoined checks that got is the parts concatenated, and that it is
// the one non-empty part itself when there is only one.
func checkJoined(t *rapid.T, what string, got []Envelope, parts [][]Envelope) {
	var want []Envelope
	var filled [][]Envelope
	for _, p := range parts {
		want = append(want, p...)
		if len(p) > 0 {
			filled = append(filled, p)
		}
	}
	if !slices.EqualFunc(got, want, func(a, b Envelope) bool { return a.To == b.To }) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
	if len(filled) == 1 && &got[0] != &filled[0][0] {
		t.Fatalf("%s: the one broker's messages were copied", what)
	}
}
