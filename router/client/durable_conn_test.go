package client

import (
	"bytes"
	"testing"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// TestReadReusedKeepsNothingOfTheBuffer: a durable connection reads every
// frame into one reused buffer; the messages it decoded before, events,
// names and reasons included, must be unchanged by the frames read after
// them (with different names, values and lengths over the same bytes).
func TestReadReusedKeepsNothingOfTheBuffer(t *testing.T) {
	var stream bytes.Buffer
	var want []durable.Msg
	for i := range 50 {
		ev := match.MustEvent(
			match.Attr{Name: "group", Value: match.Int(int64(i % 7))},
			match.Attr{Name: string(rune('a'+i%26)) + "name", Value: match.Str(string(bytes.Repeat([]byte{byte('A' + i%26)}, 10+i*7)))},
		)
		m := durable.Msg{Kind: durable.MsgEvent, Pubend: "p" + string(rune('a'+i%3)), Sub: "s" + string(rune('0'+i%10)), Session: uint64(i + 1), Tick: durable.Tick(100 + i), Event: ev}
		if i%5 == 4 {
			m = durable.Msg{Kind: durable.MsgRefused, Sub: "s", Session: uint64(i + 1), Reason: string(bytes.Repeat([]byte{byte('a' + i%26)}, i))}
		}
		want = append(want, m)
		stream.Write(wire.AppendFrame(nil, &wire.Durable{Msg: m}))
	}
	fr := wire.NewFrameReader(&stream, 0)
	var dec wire.EventDecoder
	var got []durable.Msg
	for range want {
		m, err := readReused(fr, &dec)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.(*wire.Durable).Msg)
	}
	for i := range want {
		if g, w := got[i].String(), want[i].String(); g != w || got[i].Reason != want[i].Reason || got[i].Sub != want[i].Sub {
			t.Fatalf("message %d after reading the rest:\n got %s\nwant %s", i, g, w)
		}
	}
}
