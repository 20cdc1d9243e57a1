package sim

import (
	"fmt"

	"github.com/sift-pubsub/sift/scribe"
)

// Sim drives a set of nodes over a network, one event at a time.
type Sim struct {
	Cfg   scribe.Config
	Net   Network
	Nodes []*scribe.Node
	// BounceDelay is how long a message to a dead node takes to come back
	// to its sender as undeliverable (default: the network delay between
	// them, twice over, as a connection attempt would take).
	BounceDelay scribe.Time
	// OnSend, if set, sees every message as it is sent.
	OnSend func(from, to scribe.Addr, m *scribe.Message)
	// OnDeliver, if set, sees every multicast delivery.
	OnDeliver func(at scribe.Addr, d scribe.Delivery, now scribe.Time)
	// Sent counts the messages nodes sent, by kind.
	Sent [scribe.NumKinds]int64
	// Bounces counts messages that found their destination dead.
	Bounces int64

	alive  []bool
	killed int           // nodes killed so far
	byID   []scribe.Addr // nodes sorted by id, built on first use
	now    scribe.Time
	seq    uint64
	q      queue
	out    scribe.Outbox
}

// New creates one node per id (node i has address i) on net. cfg is
// completed with defaults and validated.
func New(cfg scribe.Config, net Network, ids []scribe.ID) (*Sim, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("new simulator: %w", err)
	}
	if len(ids) != net.Nodes() {
		return nil, fmt.Errorf("new simulator: %d ids for a network of %d nodes", len(ids), net.Nodes())
	}
	s := &Sim{Cfg: cfg, Net: net, Nodes: make([]*scribe.Node, len(ids)), alive: make([]bool, len(ids))}
	for i, id := range ids {
		s.Nodes[i] = scribe.NewNode(cfg, scribe.Ref{ID: id, Addr: scribe.Addr(i)}, net)
		s.alive[i] = true
	}
	return s, nil
}

// Now is the simulated time.
func (s *Sim) Now() scribe.Time { return s.now }

// Alive reports whether node a has not been killed.
func (s *Sim) Alive(a scribe.Addr) bool { return s.alive[a] }

// Kill stops node a: it handles no further messages, and messages sent to it
// bounce.
func (s *Sim) Kill(a scribe.Addr) {
	if s.alive[a] {
		s.alive[a] = false
		s.killed++
	}
}

// Do runs an application call on node a at the current time and sends its
// effects.
func (s *Sim) Do(a scribe.Addr, call func(n *scribe.Node, now scribe.Time, out *scribe.Outbox)) {
	if !s.alive[a] {
		return
	}
	call(s.Nodes[a], s.now, &s.out)
	s.flush(a)
}

// Run processes events until none are left.
func (s *Sim) Run() {
	var ev event
	for len(s.q) > 0 {
		s.q.pop(&ev)
		s.step(&ev)
	}
}

// RunUntil processes every event due by time t, then sets the clock to t.
func (s *Sim) RunUntil(t scribe.Time) {
	var ev event
	for len(s.q) > 0 && s.q[0].at <= t {
		s.q.pop(&ev)
		s.step(&ev)
	}
	if t > s.now {
		s.now = t
	}
}

// RunTicks advances to time until, calling every live node's Tick each
// heartbeat interval along the way (at multiples of the interval).
func (s *Sim) RunTicks(until scribe.Time) {
	iv := s.Cfg.HeartbeatInterval
	if iv <= 0 {
		s.RunUntil(until)
		return
	}
	for t := (s.now/iv + 1) * iv; t <= until; t += iv {
		s.RunUntil(t)
		for a := range s.Nodes {
			s.Do(scribe.Addr(a), func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Tick(now, out) })
		}
	}
	s.RunUntil(until)
}

func (s *Sim) step(ev *event) {
	s.now = ev.at
	if !s.alive[ev.to] {
		s.Bounces++
		if ev.msg.Kind == scribe.KindUndeliverable {
			return
		}
		back := s.BounceDelay
		if back == 0 {
			back = 2 * scribe.Time(s.Net.Distance(ev.to, ev.msg.From.Addr))
		}
		b := ev.msg
		s.push(ev.msg.From.Addr, back, scribe.Message{Kind: scribe.KindUndeliverable, From: s.Nodes[ev.to].Self(), Bounced: &b})
		return
	}
	s.Nodes[ev.to].Step(s.now, &ev.msg, &s.out)
	s.flush(ev.to)
}

// flush sends the outbox of node from and hands over its deliveries.
func (s *Sim) flush(from scribe.Addr) {
	for i := range s.out.Msgs {
		e := &s.out.Msgs[i]
		s.Sent[e.Msg.Kind]++
		if s.OnSend != nil {
			s.OnSend(from, e.To, &e.Msg)
		}
		s.push(e.To, scribe.Time(s.Net.Distance(from, e.To)), e.Msg)
	}
	if s.OnDeliver != nil {
		for _, d := range s.out.Deliveries {
			s.OnDeliver(from, d, s.now)
		}
	}
	s.out.Reset()
}

func (s *Sim) push(to scribe.Addr, delay scribe.Time, m scribe.Message) {
	s.seq++
	s.q.push(event{at: s.now + delay, seq: s.seq, to: to, msg: m})
}

// TotalSent is the number of messages nodes sent, of the given kinds (all
// kinds if none are given).
func (s *Sim) TotalSent(kinds ...scribe.Kind) int64 {
	var n int64
	if len(kinds) == 0 {
		for _, c := range s.Sent {
			n += c
		}
		return n
	}
	for _, k := range kinds {
		n += s.Sent[k]
	}
	return n
}
