package router

import (
	"time"

	"github.com/sift-pubsub/sift/durable"
)

// tickPeriod is how often the durable machines' timers fire.
const tickPeriod = 5 * time.Millisecond

// viewEvery is how many timer periods pass between updates of the gauges
// and of /debug/durable.
const viewEvery = 20

// maxDrain bounds the inputs stepped before the driver looks at its timer
// and its sync again.
const maxDrain = 4096

// drainBudget bounds the time one drain steps inputs. Every message the
// machines emit while it steps is held until the drain ends (the flush
// that follows sends it), so a long drain is latency for every message
// of the router, not only for those it steps.
const drainBudget = time.Millisecond

// drainClock is how many inputs a drain steps between looks at the clock.
const drainClock = 16

// syncResult is the end of one background sync: its error and how long
// it took.
type syncResult struct {
	err error
	dur time.Duration
}

// run is the driver: it steps the machines with every input and timer,
// and carries out their Ready the way the durable package asks (group
// commit, as durable/sim's driver does). Writes are applied to the store at
// once (reads see them); one background sync makes them durable, while
// input keeps accumulating in the machines; the messages of a batch leave
// only once its sync completed, and the next Ready is taken only then.
// Meanwhile the replicas apply what commits (flushInFlight), which needs
// no sync. It returns when stop is closed, after the running sync ends.
func (d *durableNode) run(stop <-chan struct{}) {
	tick := time.NewTicker(tickPeriod)
	defer tick.Stop()
	var syncing chan syncResult
	ticks := 0
	lastSpace, lastRetry := time.Time{}, time.Now()
	go d.heartbeats(stop)
	var local []durable.Envelope // messages between this router's machines
	for {
		select {
		case in := <-d.replicaIn:
			d.stepInput(in)
		case in := <-d.in:
			d.stepInput(in)
			d.drain(syncing)
		case <-d.topo:
			local = d.retopologize(local)
		case <-tick.C:
			d.tick(now())
			if time.Since(lastSpace) >= spaceCheckPeriod {
				lastSpace = time.Now()
				d.checkSpace()
			}
			if d.host.Failing() != nil && time.Since(lastRetry) >= storeRetryPeriod {
				lastRetry = time.Now()
				local = d.send(d.retryFailed(), local)
			}
			if ticks++; ticks%viewEvery == 0 {
				d.publishView()
			}
		case res := <-syncing:
			syncing = nil
			if res.err != nil {
				before := d.storeFull()
				d.host.Fail(true, res.err)
				d.noteFull(before)
				break
			}
			d.met.syncs.Inc()
			d.met.syncSeconds.Observe(res.dur.Seconds())
			local = d.send(d.host.Synced(), local)
			d.sendReplicaPeers()
		case <-stop:
			if syncing != nil {
				<-syncing
			}
			return
		}
		d.serveReplicas()
		for {
			for _, env := range local {
				d.stepLocal(env)
			}
			clear(local) // kept for the next round: a long answer is thousands of envelopes
			local = d.sendStoreless(local[:0])
			if len(local) > 0 {
				continue
			}
			if d.host.Failing() != nil {
				break
			}
			if syncing != nil {
				if local = d.flushInFlight(local); len(local) == 0 {
					break
				}
				continue
			}
			if syncing, local = d.flush(local); len(local) == 0 {
				break
			}
		}
		d.flushLinks()
	}
}

// sendStoreless sends what the intermediate broker and the directory
// emitted, at once, even while a sync is in flight: they write nothing,
// and every message they were stepped with was sent only once its
// sender's writes were durable, so nothing they send depends on a write
// still being synced. Holding them for the group commit made every local
// hop (the SHB's nacks, the pubend's answers, through this router) wait
// for up to two syncs. Messages for this router's own machines are
// appended to local.
func (d *durableNode) sendStoreless(local []durable.Envelope) []durable.Envelope {
	local = d.send(d.router.Ready().Msgs, local)
	return d.send(d.dir.Ready().Msgs, local)
}

// now is the durable clock: wall time in microseconds.
func now() durable.Tick { return durable.Tick(time.Now().UnixMicro()) }

// flush takes every machine's Ready through the group commit
// (durable.Host). Without writes, the messages go at once (appended to
// local when they are for this router's machines). With writes, the batch
// is applied and a background sync starts; its messages wait for it, but
// for the early ones (a replica's), which go at once too.
func (d *durableNode) flush(local []durable.Envelope) (chan syncResult, []durable.Envelope) {
	b, msgs := d.host.Take()
	d.sendReplicaNow()
	local = d.send(msgs, local) // all of them without writes, else the early ones
	if b == nil {
		d.sendReplicaPeers()
		return nil, local
	}
	if err := d.store.Apply(&b.Writes, false); err != nil {
		before := d.storeFull()
		d.host.Fail(false, err)
		d.noteFull(before)
		return nil, local
	}
	d.met.writes.Add(float64(len(b.Writes.Ops)))
	ch := make(chan syncResult, 1)
	go func() {
		began := time.Now()
		err := d.store.Flush()
		ch <- syncResult{err: err, dur: time.Since(began)}
	}()
	return ch, local
}

// drain steps the inputs already queued, up to maxDrain of them or for
// drainBudget. It stops early when the sync in flight has completed
// (syncing holds its result): the messages held for that sync leave, and
// the next batch starts syncing, only once the driver takes the result,
// so stepping on would delay both. It stops too when replicas need the
// driver (durable_replica.go).
func (d *durableNode) drain(syncing <-chan syncResult) {
	began := time.Now()
	for i := range maxDrain {
		if d.replicasUrgent() || len(syncing) > 0 {
			return
		}
		if i%drainClock == drainClock-1 && time.Since(began) >= drainBudget {
			return
		}
		select {
		case in := <-d.in:
			d.stepInput(in)
		default:
			return
		}
	}
}

// stepInput steps the machine an input is for.
func (d *durableNode) stepInput(in durableInput) {
	if in.detach != 0 {
		d.clientGone(in.detach)
		return
	}
	if in.replica != nil {
		d.stepReplicaFrame(in.env.From, in.replica)
		return
	}
	if in.admin != nil {
		d.serveAdmin(in.admin)
		return
	}
	d.stepLocal(in.env)
}

// stepLocal steps the local machine env is addressed to. Errors are the
// machines refusing a message (unknown pubend, unexpected kind): they
// change nothing and are logged at debug level.
func (d *durableNode) stepLocal(env durable.Envelope) {
	t := now()
	var err error
	switch {
	case env.To == d.name && env.Msg.Kind == durable.MsgHosts:
		if err = d.dir.Step(t, env); err == nil && d.dir.Changed() {
			signal(d.topo)
		}
	case env.To == d.name:
		err = d.router.Step(t, env)
	case env.To == shbID(d.name):
		d.view.fromClient(env)
		err = d.shb.Step(t, env)
	case d.replicaByNode[env.To] != nil:
		err = d.stepReplica(d.replicaByNode[env.To], t, env)
	default:
		pe := d.pubendOf(env.To)
		if pe == nil {
			d.log.Debug("durable message for an unknown node dropped", "msg", env.String())
			return
		}
		if env.Msg.Kind == durable.MsgPublish {
			if why := d.storeFull(); why != "" {
				d.send(d.refusePublish(env, why), nil) // to a client: nothing local
				return
			}
			d.met.published.Inc()
		}
		err = pe.Step(t, env)
	}
	if err != nil {
		d.met.refused.Inc()
		d.log.Debug("durable message refused", "msg", env.String(), "err", err)
	}
}

// pubendOf returns the local pubend whose node id is node, or nil.
func (d *durableNode) pubendOf(node string) *durable.Pubend { return d.byNode[node] }

// tick fires every machine's timer.
func (d *durableNode) tick(t durable.Tick) {
	for _, p := range d.pubendIDs {
		if err := d.pubends[p].Tick(t); err != nil {
			d.log.Warn("durable pubend tick", "err", err)
		}
	}
	d.tickReplicas(t)
	d.router.Tick(t)
	d.dir.Tick(t)
	if err := d.shb.Tick(t); err != nil {
		d.log.Warn("durable shb tick", "err", err)
	}
}
