package client

import (
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
)

// heartbeat writes a padded wire.Heartbeat on the control stream every
// KeepAlive period until the client is done. QUIC's own keep-alives are
// too small for a restarted router to answer with a stateless reset, so
// without these an idle subscriber would notice the restart only at its
// idle timeout; with them it notices within a period. A failed write
// needs no handling here: the control reader reports the lost connection.
func (c *Client) heartbeat() {
	t := time.NewTicker(c.opts.KeepAlive)
	defer t.Stop()
	hb := &wire.Heartbeat{Padding: wire.HeartbeatPadding}
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			if c.writeControl(hb) != nil {
				return
			}
		}
	}
}
