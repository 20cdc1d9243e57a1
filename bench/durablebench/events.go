package durablebench

import (
	"fmt"
	"math/rand/v2"

	"github.com/sift-pubsub/sift/match"
)

// Events are the benchmark's events: event s has attributes group (s mod
// groups), seq (s) and pay (a payload of fixed size), so every system
// carries the same bytes. Subscriber i takes group i mod groups.
type Events struct {
	groups  int
	payload string
}

// NewEvents returns the events of a benchmark with the given groups and
// payload size; seed picks the payload's letters.
func NewEvents(groups, payload int, seed uint64) Events {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, payload)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return Events{groups: groups, payload: string(b)}
}

// Event returns event s.
func (e Events) Event(s int) match.Event {
	return match.MustEvent(
		match.Attr{Name: "group", Value: match.Int(int64(e.Group(s)))},
		match.Attr{Name: "seq", Value: match.Int(int64(s))},
		match.Attr{Name: "pay", Value: match.Str(e.payload)},
	)
}

// Group returns the group of event s.
func (e Events) Group(s int) int { return s % e.groups }

// Groups returns the number of groups.
func (e Events) Groups() int { return e.groups }

// Sub describes durable subscriber Index: its id, group, Sift filter and
// JetStream subject.
type Sub struct {
	Index, Group int
	ID           string
	Filter       string
	Subject      string
}

// Sub returns subscriber i.
func (e Events) Sub(i int) Sub {
	g := i % e.groups
	return Sub{Index: i, Group: g, ID: fmt.Sprintf("s%d", i), Filter: fmt.Sprintf("group == %d", g), Subject: Subject(g)}
}

// Subject is the JetStream subject of group g.
func Subject(g int) string { return fmt.Sprintf("ev.%d", g) }

// SeqOf returns an event's seq attribute, or -1.
func SeqOf(e match.Event) int {
	v, ok := e.Get("seq")
	if !ok || v.Kind() != match.KindInt {
		return -1
	}
	return int(v.AsInt())
}

// GroupOf returns an event's group attribute, or -1.
func GroupOf(e match.Event) int {
	v, ok := e.Get("group")
	if !ok || v.Kind() != match.KindInt {
		return -1
	}
	return int(v.AsInt())
}
