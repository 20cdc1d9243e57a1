package wire

import (
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/sift-pubsub/sift/match"
)

// TestOwnedFramesNotPinnedBySlab: a router's reader decodes Publish frames
// with DecodeOwnedPublish, whose events' attribute lists are carved from
// the decoder's slab and whose strings alias the frame. Once the events
// are routed and dropped, the frames must become garbage even though the
// decoder lives on: its slab must not keep a run of large frames alive
// (up to attrSlab of them, one kept attribute each).
func TestOwnedFramesNotPinnedBySlab(t *testing.T) {
	var d EventDecoder
	d.Wanted = NewWanted([]string{"symbol"})
	big := strings.Repeat("x", 256<<10)
	ev := match.MustEvent(match.Attr{Name: "blob", Value: match.Str(big)}, match.Attr{Name: "symbol", Value: match.Str("IBM")})
	var firsts []weak.Pointer[byte]
	for range 16 { // 4 MiB of frames, one kept attribute each
		body := (&Publish{Seq: 1, Events: []match.Event{ev}}).AppendBody(nil)
		firsts = append(firsts, weak.Make(&body[0]))
		m, err := d.DecodeOwnedPublish(body)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Events[0].String(); !strings.Contains(got, "IBM") {
			t.Fatalf("decoded %s", got)
		}
	}
	runtime.GC()
	runtime.GC()
	pinned := 0
	for _, w := range firsts {
		if w.Value() != nil {
			pinned++
		}
	}
	runtime.KeepAlive(&d)
	if pinned > 4 { // the budget (1 MiB) and the last frame
		t.Fatalf("%d of %d dropped 256 KiB frames still reachable through the decoder", pinned, len(firsts))
	}
}
