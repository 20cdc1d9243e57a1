package router_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
)

// TestLargestEventCrossesLinks: an event a router accepts from a client in
// a Publish frame of exactly MaxFrame bytes crosses the chain's links
// (which add a witness or a summary to it) to a subscriber at the far end,
// in exact and in Bloom mode, and every link stays up.
func TestLargestEventCrossesLinks(t *testing.T) {
	const maxFrame = 4096
	for _, fwd := range forwardModes {
		t.Run(fwd, func(t *testing.T) {
			a, b, c := startChain(t, func(cfg *router.Config) { cfg.MaxFrame, cfg.Forward = maxFrame, fwd })
			sub, err := dial(t, c, "sub", client.Options{}).Subscribe(testCtx(t), `big == true`)
			if err != nil {
				t.Fatal(err)
			}
			ev := eventOfSize(t, maxFrame-3) // + type, seq and count: maxFrame
			body := append([]byte{1, 1}, wire.AppendEvent(nil, ev)...)
			frame := binary.BigEndian.AppendUint32(nil, uint32(1+len(body)))
			frame = append(append(frame, byte(wire.TypePublish)), body...)
			if got := len(frame) - wire.HeaderLen; got != maxFrame {
				t.Fatalf("frame of %d bytes, want %d", got, maxFrame)
			}
			_, data := rawHandshake(t, rawConn(t, a))
			if _, err := data.Write(frame); err != nil {
				t.Fatal(err)
			}
			if got := collect(t, sub, 1); !got[0].Equal(ev) {
				t.Fatalf("got %v", got[0])
			}
			if _, peers := debugRoutes(t, b); len(peers) != 2 {
				t.Fatalf("b's links after the event: %+v", peers)
			}
		})
	}
}

// eventOfSize returns an event {big: true, pad: "xx..."} whose encoding
// is n bytes.
func eventOfSize(t *testing.T, n int) match.Event {
	t.Helper()
	for pad := n; pad > 0; pad-- {
		ev := match.MustEvent(match.Attr{Name: "big", Value: match.Bool(true)}, match.Attr{Name: "pad", Value: match.Str(strings.Repeat("x", pad))})
		if len(wire.AppendEvent(nil, ev)) == n {
			return ev
		}
	}
	t.Fatalf("no event of %d bytes", n)
	return match.Event{}
}
