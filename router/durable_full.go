package router

import (
	"fmt"
	"syscall"
	"time"

	"github.com/sift-pubsub/sift/durable"
)

// A full disk, or a store that fails to write, stops durable publishing,
// not the router: the driver keeps the batch it could not write (its
// writes and the messages held for them), retries it every
// storeRetryPeriod, and meanwhile answers durable publishes with a
// refusal that acknowledges nothing (client.DurablePublisher backs off and
// resends), counts them in sift_durable_publishes_refused_total and logs
// when durable publishing stops and resumes. It resumes once the batch is
// written and synced and the file system has MinFree bytes free again.
// Everything else (plain routing, delivery of what is logged) goes on;
// the machines keep accumulating their input meanwhile (group commit).

const (
	storeRetryPeriod = 200 * time.Millisecond
	defaultMinFree   = 64 << 20
	// spaceCheckPeriod is how often the store's free space is read.
	spaceCheckPeriod = 200 * time.Millisecond
)

// storeFull says why durable publishes are refused now, or "".
func (d *durableNode) storeFull() string {
	switch {
	case d.host.Failing() != nil:
		return fmt.Sprintf("durable store failing: %v", d.host.Failing())
	case d.lowSpace != "":
		return d.lowSpace
	}
	return ""
}

// noteFull logs a change of the refusing state.
func (d *durableNode) noteFull(before string) {
	after := d.storeFull()
	switch {
	case before == "" && after != "":
		d.log.Error("durable publishes refused", "reason", after)
	case before != "" && after == "":
		d.log.Info("durable publishes resumed")
	}
	v := 0.0
	if after != "" {
		v = 1
	}
	d.met.storeFull.Set(v)
}

// refusePublish answers a durable publish while the store is full.
func (d *durableNode) refusePublish(env durable.Envelope, reason string) []durable.Envelope {
	d.met.publishRefused.Inc()
	return []durable.Envelope{durable.Refusal(env, reason)}
}

// checkSpace reads the free space of the store's file system.
func (d *durableNode) checkSpace() {
	before := d.storeFull()
	d.lowSpace = ""
	free, err := d.freeSpace(d.storeDir)
	if err == nil && free < d.minFree {
		d.lowSpace = fmt.Sprintf("disk nearly full: %d MiB free in %s, below the %d MiB kept free", free>>20, d.storeDir, d.minFree>>20)
	}
	d.noteFull(before)
}

// statfsFree returns the bytes free for unprivileged users on dir's file
// system.
func statfsFree(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// retryFailed writes and syncs the failed batch again; on success its
// messages are returned to be sent.
func (d *durableNode) retryFailed() []durable.Envelope {
	b, applied := d.host.Retry()
	before := d.storeFull()
	var err error
	if !applied {
		if err = d.store.Apply(&b.Writes, false); err == nil {
			d.host.Applied()
		}
	}
	if err == nil {
		err = d.store.Flush()
	}
	if err != nil {
		d.host.Fail(false, err)
		return nil
	}
	d.met.syncs.Inc()
	msgs := d.host.Synced()
	d.noteFull(before)
	return msgs
}
