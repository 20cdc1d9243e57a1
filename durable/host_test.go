package durable

import (
	"slices"
	"testing"
)

// fakeBroker hands out the Readies it is given.
type fakeBroker struct{ readies []Ready }

func (f *fakeBroker) Step(Tick, Envelope) error { return nil }
func (f *fakeBroker) Tick(Tick) error           { return nil }
func (f *fakeBroker) Ready() Ready {
	if len(f.readies) == 0 {
		return Ready{}
	}
	rd := f.readies[0]
	f.readies = f.readies[1:]
	return rd
}

func msg(to string) Envelope { return Envelope{To: to, Msg: Msg{Kind: MsgSilence}} }

// TestHostGroupCommit: messages without writes leave at once; with
// writes, every broker's writes form one batch and all messages wait for
// Synced; nothing is taken while a batch is in flight; Lost drops the
// held messages.
func TestHostGroupCommit(t *testing.T) {
	var w1, w2 Batch
	w1.Set([]byte("a"), []byte("1"))
	w2.Set([]byte("b"), []byte("2"))
	a := &fakeBroker{readies: []Ready{{Msgs: []Envelope{msg("x")}}, {Writes: &w1, Msgs: []Envelope{msg("y")}}, {Writes: &w1}}}
	b := &fakeBroker{readies: []Ready{{}, {Writes: &w2, Msgs: []Envelope{msg("z")}}, {Msgs: []Envelope{msg("q")}}}}
	h := NewHost(a, b)
	if batch, now := h.Take(); batch != nil || len(now) != 1 || now[0].To != "x" {
		t.Fatalf("no writes: batch %v, now %v", batch, now)
	}
	batch, now := h.Take()
	if batch == nil || len(now) != 0 || len(batch.Writes.Ops) != 2 || len(batch.Msgs) != 2 {
		t.Fatalf("writes: batch %+v, now %v", batch, now)
	}
	if b2, now := h.Take(); b2 != nil || now != nil {
		t.Fatalf("taken while in flight: %v %v", b2, now)
	}
	got := h.Synced()
	if !slices.EqualFunc(got, []Envelope{msg("y"), msg("z")}, func(x, y Envelope) bool { return x.To == y.To }) {
		t.Fatalf("synced: %v", got)
	}
	if batch, _ := h.Take(); batch == nil || len(batch.Msgs) != 1 {
		t.Fatalf("third: %+v", batch)
	}
	h.Lost()
	if h.InFlight() != nil || h.Synced() != nil {
		t.Fatal("a lost batch is still in flight")
	}
}

// TestHostEarly: a Ready's early messages leave when it is taken, before
// the batch's sync and ahead of the messages held for it; without writes
// they come first among the messages that leave at once.
func TestHostEarly(t *testing.T) {
	var w Batch
	w.Set([]byte("a"), []byte("1"))
	a := &fakeBroker{readies: []Ready{{Writes: &w, Msgs: []Envelope{msg("held")}, Early: []Envelope{msg("e1")}}, {Msgs: []Envelope{msg("m")}, Early: []Envelope{msg("e3")}}}}
	b := &fakeBroker{readies: []Ready{{Early: []Envelope{msg("e2")}}}}
	h := NewHost(a, b)
	to := func(es []Envelope) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.To)
		}
		return out
	}
	batch, now := h.Take()
	if batch == nil || !slices.Equal(to(now), []string{"e1", "e2"}) || !slices.Equal(to(batch.Msgs), []string{"held"}) {
		t.Fatalf("with writes: batch %+v, now %v", batch, to(now))
	}
	if got := h.Synced(); !slices.Equal(to(got), []string{"held"}) {
		t.Fatalf("synced: %v", to(got))
	}
	if batch, now := h.Take(); batch != nil || !slices.Equal(to(now), []string{"e3", "m"}) {
		t.Fatalf("without writes: batch %+v, now %v", batch, to(now))
	}
}

// TestDirectoryFloods: three directories a - b - c learn each other's
// pubends through b; an older or repeated announcement changes nothing
// and is not flooded again; a new neighbour gets every entry; a newer
// version replaces the pubends; a malformed announcement is an error.
func TestDirectoryFloods(t *testing.T) {
	dirs := map[string]*Directory{}
	for i, n := range []string{"a", "b", "c"} {
		d, err := NewDirectory(DirectoryConfig{Node: n, Local: []string{"p" + n}, Version: uint64(10 + i)})
		if err != nil {
			t.Fatal(err)
		}
		dirs[n] = d
	}
	dirs["a"].SetLinks([]string{"b"})
	dirs["b"].SetLinks([]string{"a", "c"})
	dirs["c"].SetLinks([]string{"b"})
	deliver := func() int {
		n := 0
		for moved := true; moved; {
			moved = false
			for _, name := range []string{"a", "b", "c"} {
				for _, env := range dirs[name].Ready().Msgs {
					if err := dirs[env.To].Step(0, env); err != nil {
						t.Fatal(err)
					}
					n++
					moved = true
				}
			}
		}
		return n
	}
	deliver()
	for _, name := range []string{"a", "b", "c"} {
		got := dirs[name].Pubends()
		if len(got) != 3 || got["pa"] != "a" || got["pb"] != "b" || got["pc"] != "c" {
			t.Fatalf("%s knows %v", name, got)
		}
		if r := dirs[name].Routers(); !slices.Equal(r, []string{"a", "b", "c"}) {
			t.Fatalf("%s knows routers %v", name, r)
		}
	}
	dirs["a"].Changed()
	if err := dirs["a"].Step(0, Envelope{From: "b", Msg: Msg{Kind: MsgHosts, Origin: "c", Version: 12, Pubends: []string{"other"}}}); err != nil {
		t.Fatal(err)
	}
	if dirs["a"].Changed() || len(dirs["a"].Ready().Msgs) != 0 || dirs["a"].Pubends()["other"] != "" {
		t.Fatal("a repeated announcement changed the directory")
	}
	dirs["b"].Step(0, Envelope{From: "c", Msg: Msg{Kind: MsgHosts, Origin: "c", Version: 20, Pubends: []string{"pc", "pc2"}}})
	deliver()
	if dirs["a"].Pubends()["pc2"] != "c" {
		t.Fatalf("a newer version did not reach a: %v", dirs["a"].Pubends())
	}
	if err := dirs["a"].Step(0, Envelope{From: "b", Msg: Msg{Kind: MsgHosts}}); err == nil {
		t.Fatal("an announcement without origin was taken")
	}
	d, _ := NewDirectory(DirectoryConfig{Node: "d"})
	dirs["d"] = d
	dirs["c"].SetLinks([]string{"b", "d"})
	if n := len(dirs["c"].Ready().Msgs); n != 3 {
		t.Fatalf("a new neighbour of c got %d entries, want 3 (a, b, c)", n)
	}
}
