package router

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sift-pubsub/sift/durable"
)

// DurableStatus is the durable side of a router for /debug/durable.
type DurableStatus struct {
	Router string `json:"router"`
	// At is when the driver took this view (Unix microseconds): a view
	// that stops moving says the driver is stuck, not the state.
	At          durable.Tick          `json:"at"`
	Pubends     []DurablePubendStatus `json:"pubends"`
	Subscribers []DurableSubStatus    `json:"subscribers"`
	// Links maps each neighbour to the routers reachable through it, as
	// the durable side routes by them.
	Links map[string][]string `json:"links"`
	// Upstreams maps each pubend to the node its knowledge comes from.
	Upstreams map[string]string `json:"upstreams"`
	// LinkDropped counts durable messages dropped on full link lanes.
	LinkDropped float64 `json:"link_dropped"`
	// Outbox is, per neighbour, the durable frames waiting for its link
	// lane, and Lane the entries on that lane not yet written: a backlog
	// that only grows says the link (or the neighbour reading it) is the
	// bottleneck, and live knowledge waits behind it.
	Outbox map[string]int `json:"outbox,omitempty"`
	Lane   map[string]int `json:"lane,omitempty"`
	// Router counters of the intermediate broker since it started.
	NacksFromBelow int `json:"nacks_from_below"`
	NacksUpstream  int `json:"nacks_upstream"`
	NacksAnswered  int `json:"nacks_answered"`
	// SHB is the counters of this router's SHB since it started (its
	// catch-up nacks, covers and overflows show where a stalled catch-up
	// waits).
	SHB durable.SHBStats `json:"shb"`
	// Catchup is the SHB's catch-up streams: what each waits for.
	Catchup []durable.CatchupStatus `json:"catchup,omitempty"`
	// Covers is the SHB's live covers, and Nacks the intermediate
	// broker's nack bookkeeping: with Catchup, whether a stalled tick is
	// asked for, by whom, and who waits for its answer.
	Covers []durable.CoverStatus      `json:"covers,omitempty"`
	Nacks  []durable.RouterNackStatus `json:"nacks,omitempty"`
	// Replicas lists this router's replicas of replicated pubends.
	Replicas []DurableReplicaStatus `json:"replicas,omitempty"`
}

// DurableReplicaStatus is this router's replica of one replicated
// pubend, as raft sees it: who leads (as far as this replica knows), the
// term, the voters as applied here, and how far its log is committed and
// applied. Leading is set while the pubend runs here; Voter while this
// replica's id is a voter (a replica that rejoined after losing its store
// is not, until the leader's membership change is applied).
type DurableReplicaStatus struct {
	Pubend  string   `json:"pubend"`
	Name    string   `json:"name"`
	ID      uint64   `json:"id"`
	State   string   `json:"state"`
	Leader  string   `json:"leader"`
	Leading bool     `json:"leading"`
	Voter   bool     `json:"voter"`
	Term    uint64   `json:"term"`
	Commit  uint64   `json:"commit"`
	Applied uint64   `json:"applied"`
	Voters  []string `json:"voters"`
	// Learners lists the replicas catching up before they vote (a
	// joining replica's first stage).
	Learners []string `json:"learners,omitempty"`
	// Roster lists the routers that may hold a replica, as committed
	// here: the pubend's --replicas until a membership change.
	Roster []string `json:"roster"`
	// Progress is, at the leader, raft's view of each other voter's log
	// by name: its state (probe, replicate, snapshot), match and next
	// indexes, and whether sending to it is paused.
	Progress map[string]string `json:"progress,omitempty"`
}

// DurablePubendStatus is one pubend's positions at this router. Local
// pubends have their announced tick and L prefix; every pubend has the
// SHB's latestDelivered and PFS size.
type DurablePubendStatus struct {
	Pubend          string       `json:"pubend"`
	Host            string       `json:"host"`
	LastAnnounced   durable.Tick `json:"last_announced,omitempty"`
	Released        durable.Tick `json:"released,omitempty"`
	LatestDelivered durable.Tick `json:"latest_delivered"`
	PFSRecords      uint64       `json:"pfs_records"`
	// WaitsFor lists, for a local pubend, the SHBs whose release reports
	// it waits for, and Reported those that reported (with the tick each
	// released); LogBytes estimates its event log's size on disk.
	WaitsFor []string                `json:"waits_for,omitempty"`
	Reported map[string]durable.Tick `json:"reported,omitempty"`
	// Wiped lists the SHBs seen back with an empty disk whose previous
	// store still holds release (DurableConfig.WipeGrace), with the tick
	// it holds at.
	Wiped    map[string]durable.Tick `json:"wiped,omitempty"`
	LogBytes uint64                  `json:"log_bytes,omitempty"`
	// AnswersPending counts, for a local pubend, the nacked ticks it has
	// still to answer.
	AnswersPending durable.Tick `json:"answers_pending,omitempty"`
}

// DurableSubStatus is one durable subscriber as this router's SHB saw it
// since the router started: its session, the CT of what was sent to it
// and the CT it acknowledged.
type DurableSubStatus struct {
	ID        string     `json:"id"`
	Connected bool       `json:"connected"`
	Session   uint64     `json:"session"`
	Sent      durable.CT `json:"sent"`
	Acked     durable.CT `json:"acked"`
	Refused   string     `json:"refused,omitempty"`
}

// durableView follows the subscribers' positions from the messages
// between the SHB and its clients (driver goroutine only).
type durableView struct {
	subs      map[string]*DurableSubStatus
	bySession map[uint64]*DurableSubStatus // connected sessions
}

func (v *durableView) init() {
	v.subs = map[string]*DurableSubStatus{}
	v.bySession = map[uint64]*DurableSubStatus{}
}

func (v *durableView) sub(id string) *DurableSubStatus {
	s := v.subs[id]
	if s == nil {
		s = &DurableSubStatus{ID: id, Sent: durable.CT{}, Acked: durable.CT{}}
		v.subs[id] = s
	}
	return s
}

// fromClient records a subscriber's message to the SHB.
func (v *durableView) fromClient(env durable.Envelope) {
	m := env.Msg
	switch m.Kind {
	case durable.MsgResume:
		s := v.sub(m.Sub)
		delete(v.bySession, s.Session)
		s.Session, s.Connected, s.Refused = m.Session, true, ""
		v.bySession[m.Session] = s
	case durable.MsgAck:
		s := v.sub(m.Sub)
		for p, t := range m.CT {
			s.Acked[p] = max(s.Acked[p], t)
		}
	case durable.MsgDisconnect:
		if s := v.subs[m.Sub]; s != nil && s.Session == m.Session {
			s.Connected = false
			delete(v.bySession, m.Session)
		}
	case durable.MsgUnsubscribe:
		if s := v.subs[m.Sub]; s != nil {
			delete(v.bySession, s.Session)
		}
		delete(v.subs, m.Sub)
	}
}

// toClient records the SHB's message to a subscriber.
func (v *durableView) toClient(env durable.Envelope) {
	m := env.Msg
	var s *DurableSubStatus
	if m.Sub != "" {
		s = v.subs[m.Sub]
	} else {
		s = v.bySession[m.Session]
	}
	if s == nil {
		return
	}
	switch m.Kind {
	case durable.MsgStart:
		s.Sent = m.CT.Clone()
	case durable.MsgEvent, durable.MsgSubSilence:
		s.Sent[m.Pubend] = m.Tick
	case durable.MsgGap:
		s.Sent[m.Pubend] = m.To
	case durable.MsgRefused:
		s.Refused, s.Connected = m.Reason, false
		delete(v.bySession, s.Session)
	}
}

// publishView updates the gauges and the /debug/durable snapshot (driver
// goroutine).
func (d *durableNode) publishView() {
	st := DurableStatus{Router: d.name, At: now()}
	for _, p := range d.shb.Pubends() {
		ps := DurablePubendStatus{Pubend: p, Host: d.hosts[p], LatestDelivered: d.shb.LD(p), PFSRecords: d.shb.PFSRecords(p)}
		if pe := d.pubends[p]; pe != nil {
			ps.LastAnnounced, ps.Released = pe.LastAnnounced(), pe.Lost()
			ps.WaitsFor, ps.Reported = pe.SHBs(), map[string]durable.Tick{}
			for shb, r := range pe.Reports() {
				ps.Reported[shb] = r.Tr
			}
			ps.AnswersPending = pe.AnswersPending()
			if w := pe.Wiped(); len(w) > 0 {
				ps.Wiped = w
			}
			pre := durable.PHBLogPrefix(p)
			if n, err := d.store.DiskUsage(pre, prefixEnd(pre)); err == nil {
				ps.LogBytes = n
			}
			d.met.pubendTick.WithLabelValues(p).Set(float64(ps.LastAnnounced))
			d.met.released.WithLabelValues(p).Set(float64(ps.Released))
			d.met.logBytes.WithLabelValues(p).Set(float64(ps.LogBytes))
			d.met.members.WithLabelValues(p).Set(float64(len(ps.WaitsFor)))
		}
		d.met.latestDelivered.WithLabelValues(p).Set(float64(ps.LatestDelivered))
		d.met.pfsRecords.WithLabelValues(p).Set(float64(ps.PFSRecords))
		st.Pubends = append(st.Pubends, ps)
	}
	connected, behind := 0, 0
	for _, id := range sortedNames(d.view.subs) {
		s := *d.view.subs[id]
		s.Sent, s.Acked = s.Sent.Clone(), s.Acked.Clone()
		st.Subscribers = append(st.Subscribers, s)
		if !s.Connected {
			continue
		}
		connected++
		if slices.ContainsFunc(st.Pubends, func(p DurablePubendStatus) bool { return s.Sent[p.Pubend] < p.LatestDelivered }) {
			behind++
		}
	}
	d.met.subscribers.Set(float64(len(st.Subscribers)))
	d.met.storeBytes.Set(float64(d.store.Size()))
	d.met.connected.Set(float64(connected))
	d.met.catchupSessions.Set(float64(behind))
	d.met.observeSHB(d.shb.Stats)
	st.Links, st.Upstreams = map[string][]string{}, maps.Clone(d.up)
	d.mu.Lock()
	for peer, l := range d.links {
		st.Links[peer] = slices.Clone(l.reach)
		if st.Lane == nil {
			st.Lane = map[string]int{}
		}
		st.Lane[peer], _ = l.c.q.pending()
	}
	d.mu.Unlock()
	st.LinkDropped = metricCount(d.met.linkDropped)
	for peer, ob := range d.outboxes {
		if ob.frames == 0 {
			continue
		}
		if st.Outbox == nil {
			st.Outbox = map[string]int{}
		}
		st.Outbox[peer] = ob.frames
	}
	rs := d.router.Stats
	st.NacksFromBelow, st.NacksUpstream, st.NacksAnswered = rs.NacksFromBelow, rs.NacksUpstream, rs.NacksAnswered
	st.SHB = d.shb.Stats
	st.Catchup = d.shb.Catchups()
	st.Covers = d.shb.Covers()
	st.Nacks = d.router.Nacks()
	st.Replicas = d.replicaStatus()
	d.viewMu.Lock()
	d.snap = st
	d.viewMu.Unlock()
}

// errNoDurable is the answer of /debug/durable on a router without
// durable delivery.
var errNoDurable = errors.New("durable delivery is off on this router")

// Durable returns the durable side's positions (refreshed every few
// milliseconds by its driver).
func (r *Router) Durable(context.Context) (DurableStatus, error) {
	if r.durable == nil {
		return DurableStatus{}, errNoDurable
	}
	r.durable.viewMu.Lock()
	defer r.durable.viewMu.Unlock()
	return r.durable.snap, nil
}

// metricCount reads a counter.
func metricCount(c prometheus.Counter) float64 {
	var m dto.Metric
	c.Write(&m)
	return m.GetCounter().GetValue()
}

// prefixEnd returns the smallest key above every key with prefix p.
func prefixEnd(p []byte) []byte {
	e := slices.Clone(p)
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] < 0xff {
			e[i]++
			return e[:i+1]
		}
	}
	return nil
}
