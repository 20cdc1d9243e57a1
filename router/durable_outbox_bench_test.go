package router

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// BenchmarkDurableOutbox measures what the driver pays per durable message
// to a neighbour: queueing 256 data messages of the catch-up bench's shape
// (an event of three attributes, 200 payload bytes) on a link's outbox and
// moving them onto its lane (queueLink, flushLinks), per message.
func BenchmarkDurableOutbox(b *testing.B) {
	d := &durableNode{log: slog.New(slog.DiscardHandler), met: newDurableMetrics(prometheus.NewRegistry()),
		outboxes: map[string]*outbox{}}
	l := &durableLink{peer: "b", c: &conn{q: newSendQueue(1<<20, 16)}}
	pay := strings.Repeat("x", 200)
	var msgs []durable.Msg
	for i := range 256 {
		e := match.MustEvent(match.Attr{Name: "group", Value: match.Int(int64(i % 100))},
			match.Attr{Name: "pay", Value: match.Str(pay)}, match.Attr{Name: "seq", Value: match.Int(int64(i))})
		msgs = append(msgs, durable.Msg{Kind: durable.MsgData, Pubend: "p", Tick: durable.Tick(1000 + 2*i), Prev: durable.Tick(999 + 2*i), Event: e})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		d.queueLink(l, msgs[i%len(msgs)])
		if i%len(msgs) == len(msgs)-1 {
			d.flushLinks()
			l.c.q.takeControl(nil)
		}
	}
}

// BenchmarkDurableToClient measures what the driver pays per event it
// sends a durable subscriber: the SHB's messages of the catch-up bench's
// shape, 64 a batch, to one client connection (send: toClient,
// queueClient, flushClients), per message.
func BenchmarkDurableToClient(b *testing.B) {
	d := &durableNode{log: slog.New(slog.DiscardHandler), met: newDurableMetrics(prometheus.NewRegistry()),
		clients: map[ifaceID]*durableClient{}, clientOut: map[ifaceID]*clientBatch{}}
	d.view.init()
	c := &conn{id: 7, q: newSendQueue(1<<20, 16), version: wire.ClientVersion}
	d.clients[c.id] = &durableClient{c: c, sessions: map[string]uint64{"s12": 5}}
	pay := strings.Repeat("x", 200)
	var envs []durable.Envelope
	for i := range 64 {
		e := match.MustEvent(match.Attr{Name: "group", Value: match.Int(int64(i % 100))},
			match.Attr{Name: "pay", Value: match.Str(pay)}, match.Attr{Name: "seq", Value: match.Int(int64(i))})
		envs = append(envs, durable.Envelope{From: "r1/shb", To: clientNode(c.id), Msg: durable.Msg{Kind: durable.MsgEvent,
			Pubend: "p", Sub: "s12", Session: 5, Tick: durable.Tick(1000 + i), Event: e}})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(envs) {
		d.send(envs, nil)
		c.q.takeControl(nil)
	}
}
