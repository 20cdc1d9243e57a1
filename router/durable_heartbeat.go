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

// heartbeats sends a heartbeat every period to every durable client that
// was sent nothing since the previous period (beatClients), until stop is
// closed. It runs beside the driver, not in it, so that a driver busy with
// a long batch does not pass for a dead router.
func (d *durableNode) heartbeats(stop <-chan struct{}) {
	t := time.NewTicker(heartbeatPeriod)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		d.beatClients()
	}
}

// beatClients sends a heartbeat to every durable client that was sent
// nothing since the previous call and has nothing queued: one that hears
// from the router anyway needs none, and with many subscribers receiving
// events a heartbeat each would add a frame (and a packet) per client and
// period to the events.
func (d *durableNode) beatClients() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, cl := range d.clients {
		if cl.sent.Swap(false) {
			continue
		}
		if ctrl, _ := cl.c.q.pending(); ctrl == 0 {
			cl.c.q.pushControl(heartbeatFrame)
		}
	}
}
