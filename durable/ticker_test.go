package durable

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestTickerScript runs testdata/ticker.txt: tick assignment, announcement
// and the high-water mark across restarts.
func TestTickerScript(t *testing.T) {
	var k *Ticker
	datadriven.RunTest(t, "testdata/ticker.txt", func(t *testing.T, d *datadriven.TestData) string {
		var a, b int64
		switch d.Cmd {
		case "restart":
			d.ScanArgs(t, "mark", &a)
			d.ScanArgs(t, "lease", &b)
			k = NewTicker(Tick(a), Tick(b))
		case "assign":
			d.ScanArgs(t, "now", &a)
			return fmt.Sprintf("tick=%d", k.Assign(Tick(a)))
		case "cover":
			d.ScanArgs(t, "upto", &a)
			m, raised := k.Cover(Tick(a))
			return fmt.Sprintf("mark=%d persist=%v", m, raised)
		case "announce":
			d.ScanArgs(t, "upto", &a)
			k.Announced(Tick(a))
		default:
			t.Fatalf("unknown command %q", d.Cmd)
		}
		return fmt.Sprintf("assigned=%d announced=%d mark=%d", k.LastAssigned(), k.LastAnnounced(), k.Mark())
	})
}
