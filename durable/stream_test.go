package durable

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sift-pubsub/sift/match"
)

// TestStreamScript runs testdata/stream.txt: one command per stream
// operation, each printing the new knowledge and the resulting stream.
func TestStreamScript(t *testing.T) {
	var s *Stream
	datadriven.RunTest(t, "testdata/stream.txt", func(t *testing.T, d *datadriven.TestData) string {
		var out string
		switch d.Cmd {
		case "new":
			var base int64
			d.MaybeScanArgs(t, "base", &base)
			s = NewStream(Tick(base))
		case "silence":
			var from, to int64
			d.ScanArgs(t, "from", &from)
			d.ScanArgs(t, "to", &to)
			out = fmt.Sprintf("new: %v\n", s.AddSilence(Tick(from), Tick(to)))
		case "data":
			var tick int64
			d.ScanArgs(t, "t", &tick)
			e, err := match.ParseEventJSON([]byte(strings.TrimSpace(d.Input)))
			if err != nil {
				return err.Error()
			}
			out = fmt.Sprintf("new: %v\n", s.AddData(Tick(tick), e))
		case "lost":
			var upto int64
			d.ScanArgs(t, "upto", &upto)
			out = fmt.Sprintf("new: %v\n", s.AddLost(Tick(upto)))
		case "advance":
			var upto int64
			d.ScanArgs(t, "upto", &upto)
			s.Advance(Tick(upto))
		case "segments":
			var from, to int64
			d.ScanArgs(t, "from", &from)
			d.ScanArgs(t, "to", &to)
			var b strings.Builder
			for _, g := range s.Segments(Range{Tick(from), Tick(to)}) {
				fmt.Fprintf(&b, "%s%v %s\n", g.State, g.Range, eventText(g))
			}
			return b.String()
		default:
			t.Fatalf("unknown command %q", d.Cmd)
		}
		return out + s.String()
	})
}

func eventText(g Segment) string {
	if g.State != D {
		return ""
	}
	return g.Event.String()
}
