package router

import (
	"time"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
)

// heartbeatPeriod is how often every durable client is sent a heartbeat.
// Clients close a connection that was silent for four periods
// (client.DurableOptions.Heartbeat), so a client of a router that was
// killed and restarted notices within a second and reconnects, where the
// connection's idle timeout would take seconds.
const heartbeatPeriod = 250 * time.Millisecond

// heartbeatFrame is the encoded heartbeat, the same for every client.
var heartbeatFrame = wire.AppendFrame(nil, &wire.Durable{Msg: durable.Msg{Kind: durable.MsgHeartbeat}})

// heartbeats sends a heartbeat every period to every durable client whose
// control lane is empty (one with frames queued hears from the router
// anyway), until stop is closed. It runs beside the driver, not in it, so
// that a driver busy with a long batch does not pass for a dead router.
func (d *durableNode) heartbeats(stop <-chan struct{}) {
	t := time.NewTicker(heartbeatPeriod)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		d.mu.Lock()
		for _, cl := range d.clients {
			if ctrl, _ := cl.c.q.pending(); ctrl == 0 {
				cl.c.q.pushControl(heartbeatFrame)
			}
		}
		d.mu.Unlock()
	}
}
