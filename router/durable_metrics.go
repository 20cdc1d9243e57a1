package router

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sift-pubsub/sift/durable"
)

// durableMetrics are the durable side's Prometheus metrics (all named
// sift_durable_*).
type durableMetrics struct {
	syncs, writes, published, refused       prometheus.Counter
	linkIn, linkOut, linkDropped            prometheus.Counter
	slowClients, routerRestarts             prometheus.Counter
	delivered, gaps, silences               prometheus.Counter
	silencesHeld                            prometheus.Counter
	pfsAppended, catchupNacks, overflows    prometheus.Counter
	syncSeconds                             prometheus.Histogram
	pubendTick, released, latestDelivered   *prometheus.GaugeVec
	pfsRecords, logBytes, members           *prometheus.GaugeVec
	storeBytes, storeFull                   prometheus.Gauge
	publishRefused                          prometheus.Counter
	catchupSessions, subscribers, connected prometheus.Gauge

	last durable.SHBStats // the SHB's counters at the last update
}

func newDurableMetrics(reg *prometheus.Registry) *durableMetrics {
	counter := func(name, help string) prometheus.Counter {
		return register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "sift_durable_" + name, Help: help}))
	}
	gauge := func(name, help string) prometheus.Gauge {
		return register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: "sift_durable_" + name, Help: help}))
	}
	perPubend := func(name, help string) *prometheus.GaugeVec {
		return register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sift_durable_" + name, Help: help}, []string{"pubend"}))
	}
	return &durableMetrics{
		syncs:       counter("syncs_total", "Synced write batches (group commits) of the durable store."),
		writes:      counter("writes_total", "Key writes applied to the durable store."),
		published:   counter("publishes_total", "Durable publish messages received by local pubends (resends included)."),
		refused:     counter("refused_total", "Durable messages refused or dropped as not acceptable."),
		linkIn:      counter("link_messages_in_total", "Durable messages received from neighbour routers."),
		linkOut:     counter("link_messages_out_total", "Durable messages queued to neighbour routers."),
		linkDropped: counter("link_messages_dropped_total", "Durable messages dropped because a link's control lane was full."),
		slowClients: counter("slow_clients_total", "Durable clients closed because their control lane was full."),
		routerRestarts: counter("router_incarnations_total",
			"Intermediate brokers recreated because a link change moved the way to a pubend."),
		delivered: counter("delivered_total", "Events delivered to durable subscribers."),
		gaps:      counter("gaps_total", "Gap messages sent to durable subscribers."),
		silences:  counter("silences_total", "Silence messages sent to durable subscribers."),
		silencesHeld: counter("silences_held_total",
			"Silences held back (sent once the lane has room, unless a later message replaced them) because the subscriber's control lane was backed up."),
		pfsAppended:  counter("pfs_appended_total", "PFS records appended by this router's SHB."),
		catchupNacks: counter("catchup_nacks_total", "Ticks nacked by catch-up streams."),
		overflows:    counter("overflows_total", "Up-to-date subscribers moved to catch-up by a full queue."),
		syncSeconds: register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sift_durable_sync_seconds",
			Help: "Duration of each sync of the durable store.", Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16)})),
		pubendTick:      perPubend("pubend_tick", "Highest tick a local pubend announced (microseconds)."),
		released:        perPubend("released_tick", "L prefix of a local pubend: every tick up to it is released."),
		latestDelivered: perPubend("latest_delivered_tick", "The SHB's latestDelivered for a pubend."),
		pfsRecords:      perPubend("pfs_records", "PFS records of a pubend kept by the SHB (not yet chopped)."),
		logBytes:        perPubend("pubend_log_bytes", "Estimated bytes on disk of a local pubend's event log (what is not released)."),
		members:         perPubend("pubend_members", "SHBs whose release reports a local pubend waits for."),
		storeFull:       gauge("store_full", "1 while durable publishes are refused because the store cannot write (disk nearly full, or write errors)."),
		publishRefused: counter("publishes_refused_total",
			"Durable publishes refused because the store could not take them (disk nearly full, or write errors)."),
		storeBytes:      gauge("store_bytes", "Bytes the durable store uses on disk (all pubends, the SHB and Pebble's own files)."),
		catchupSessions: gauge("catchup_sessions", "Connected durable subscribers behind latestDelivered (catching up)."),
		subscribers:     gauge("subscribers", "Durable subscriptions seen by the SHB since the router started."),
		connected:       gauge("connected_subscribers", "Connected durable subscriber sessions."),
	}
}

// register registers c in reg, or returns the collector already there
// under the same name (a router restarted with the same registry).
func register[C prometheus.Collector](reg *prometheus.Registry, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if old, ok := are.ExistingCollector.(C); ok {
				return old
			}
		}
		panic(err)
	}
	return c
}

// countToClient counts a message sent to a subscriber.
func (m *durableMetrics) countToClient(msg durable.Msg) {
	switch msg.Kind {
	case durable.MsgEvent:
		m.delivered.Inc()
	case durable.MsgGap:
		m.gaps.Inc()
	case durable.MsgSubSilence:
		m.silences.Inc()
	}
}

// observeSHB adds the SHB counters' growth since the last call.
func (m *durableMetrics) observeSHB(s durable.SHBStats) {
	if s.PFSRecords < m.last.PFSRecords || s.CatchupNack < m.last.CatchupNack || s.Overflows < m.last.Overflows {
		m.last = durable.SHBStats{} // a new SHB machine
	}
	m.pfsAppended.Add(float64(s.PFSRecords - m.last.PFSRecords))
	m.catchupNacks.Add(float64(s.CatchupNack - m.last.CatchupNack))
	m.overflows.Add(float64(s.Overflows - m.last.Overflows))
	m.last = s
}
