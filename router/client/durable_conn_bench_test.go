package client

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// BenchmarkDurableConnRead measures a durable subscriber's decoding of the
// events its router sends (the catch-up bench's shape: three attributes,
// 200 payload bytes), per event: "reused" is the connection's reader
// (readReused: one buffer, one decoder for the connection), "per-frame"
// the plain frame reader (a body and a decoder per frame), for reference.
func BenchmarkDurableConnRead(b *testing.B) {
	pay := strings.Repeat("x", 200)
	var stream []byte
	const n = 1024
	for i := range n {
		e := match.MustEvent(match.Attr{Name: "group", Value: match.Int(int64(i % 100))},
			match.Attr{Name: "pay", Value: match.Str(pay)}, match.Attr{Name: "seq", Value: match.Int(int64(i))})
		stream = wire.AppendFrame(stream, &wire.Durable{Msg: durable.Msg{Kind: durable.MsgEvent, Pubend: "p", Sub: "s12",
			Session: 0x5eed5eed5eed5eed, Tick: durable.Tick(1_700_000_000_000_000 + i), Event: e}})
	}
	for _, mode := range []string{"reused", "per-frame"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			var dec wire.EventDecoder
			var fr *wire.FrameReader
			for i := range b.N {
				if i%n == 0 {
					fr = wire.NewFrameReader(bytes.NewReader(stream), 0)
				}
				var err error
				if mode == "reused" {
					_, err = readReused(fr, &dec)
				} else {
					_, err = fr.ReadMessage()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
