package mesh

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sift-pubsub/sift/match"
)

// runAdvertCmd runs the advertisement commands of the mesh scripts (see
// TestMeshScripts); it reports false for a command it does not know.
func runAdvertCmd(t *testing.T, s *sim, d *datadriven.TestData, r func(int) int) bool {
	switch d.Cmd {
	case "adv", "unadv":
		if s.adv == nil {
			t.Fatalf("%s: the routers run without advertisements (routers ... advertise)", d.Cmd)
		}
		var c int
		d.ScanArgs(t, "client", &c)
		k := subKey{r(0), Client(c), 1}
		if d.Cmd == "unadv" {
			s.unadvertise(k)
			return true
		}
		s.advertise(k, match.MustParse(strings.TrimSpace(d.Input)))
	case "step":
		n := 1 << 30
		if d.HasArg("n") {
			d.ScanArgs(t, "n", &n)
		}
		from, to := r(0), r(1)
		for range n {
			c, k := s.queue(from, to)
			if c == nil {
				break
			}
			s.deliver(c, k)
		}
	default:
		return false
	}
	return true
}

// queue returns the connection and direction of the messages queued from
// router a to router b, or nil when none is.
func (s *sim) queue(a, b int) (*conn, int) {
	for _, c := range s.conns {
		for k := range c.ends {
			if c.ends[k].router == b && c.ends[1-k].router == a && len(c.q[k]) > 0 {
				return c, k
			}
		}
	}
	return nil, 0
}
