package router

import (
	"time"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
)

// heartbeatPeriod is how often the driver sends a heartbeat to every
// durable client. Clients close a connection that was silent for four
// periods (client.DurableOptions.Heartbeat), so a client of a router that
// was killed and restarted notices within a second and reconnects, where
// the connection's idle timeout would take seconds.
const heartbeatPeriod = 250 * time.Millisecond

// heartbeatFrame is the encoded heartbeat, the same for every client.
var heartbeatFrame = wire.AppendFrame(nil, &wire.Durable{Msg: durable.Msg{Kind: durable.MsgHeartbeat}})

// heartbeat sends a heartbeat to every durable client whose control lane
// is not backed up (a client with frames queued hears from the router
// anyway) (driver goroutine).
func (d *durableNode) heartbeat() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, cl := range d.clients {
		if ctrl, _ := cl.c.q.pending(); ctrl == 0 {
			cl.c.q.pushControl(heartbeatFrame)
		}
	}
}
