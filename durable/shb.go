package durable

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// SHBConfig configures a subscriber hosting broker. Zero tunables take the
// defaults given on each field.
type SHBConfig struct {
	// Node is the SHB's node id (also its id in release reports).
	Node string
	// Upstream is the neighbour knowledge comes from, for every pubend.
	Upstream string
	// Pubends lists the pubends the SHB receives.
	Pubends []string
	// NackDelay is how long a Q tick waits before it is nacked (default 5 ms).
	NackDelay Tick
	// NackRetry is the wait before the first repeat of a nack for the same
	// ticks (default 20 ms); each later repeat waits twice as long, up to
	// NackRetryMax (default 320 ms), shortened by a random fraction of up
	// to NackJitter (default 0.5) drawn from Rand.
	NackRetry    Tick
	NackRetryMax Tick
	NackJitter   float64
	// Rand is the source of the nack jitter; nil means no jitter. The
	// state machine draws from it only while handling a Step or Tick, so a
	// seeded source keeps a run replayable.
	Rand *rand.Rand
	// CatchupWindow is the most ticks a catch-up stream has nacked and
	// waiting at once: its flow control (default 256: each window costs a round
	// trip to the PHB, so a small one makes catch-up crawl on a real network).
	CatchupWindow int
	// SubQueue bounds each session's queue on one pubend: the most events
	// sent to the subscriber and not yet acknowledged (default 1024). An
	// up-to-date subscriber whose queue is full moves to catch-up (rule
	// SHB 4), and a catch-up stream pauses while the queue is full. A
	// subscriber must therefore acknowledge the events each session
	// received, even when its CT is one it acknowledged before (after
	// resuming with an older CT).
	SubQueue int
	// TailSize is how many recent matched events the constream keeps in
	// memory for catch-up streams (default 8192): subscribers back from a
	// shorter absence catch up from memory, with no nack round trip. As
	// many of the events catch-up nacks fetched are kept too.
	TailSize int
	// ReportInterval is the period of release reports (default 20 ms).
	ReportInterval Tick
	// IdleSilence is how long an up-to-date session is sent nothing on a
	// pubend before it gets silence(p, LD), and the period of its idle
	// silences (default ReportInterval). Each is a message to the
	// subscriber, so with many idle subscribers a short period costs a
	// message per subscriber and period; a subscriber's CT (and what it
	// acknowledges) lags LD by up to about two periods.
	IdleSilence Tick
	// InstallRetry is the interval between resends of an unacknowledged
	// install (default 20 ms).
	InstallRetry Tick
	// ProgressHold is how long LD progress over silence, and released(s,p)
	// raised by acknowledgements, may wait to be written with other
	// writes (the SHB's own, or another broker's in the same group
	// commit) before they are written alone (default 2 s): an idle SHB
	// and its idle subscribers then cost no sync of their own while the
	// router's pubend renews its lease (every second), and one per
	// ProgressHold without one. Reports and idle silences carry the
	// values written, so they lag by up to this much while idle. See
	// shbPubend.holdMeta and holdAck for why a crash that forgets the
	// progress is safe. Negative: never held.
	ProgressHold Tick
}

func (c *SHBConfig) populate() error {
	if c.Node == "" || c.Upstream == "" {
		return fmt.Errorf("shb config: Node and Upstream are required")
	}
	def := func(v *Tick, d Tick) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.NackDelay, 5_000)
	def(&c.NackRetry, 20_000)
	def(&c.NackRetryMax, 16*c.NackRetry)
	c.NackRetryMax = max(c.NackRetryMax, c.NackRetry)
	if c.NackJitter <= 0 || c.NackJitter >= 1 {
		c.NackJitter = 0.5
	}
	def(&c.ReportInterval, 20_000)
	def(&c.IdleSilence, c.ReportInterval)
	def(&c.InstallRetry, 20_000)
	if c.ProgressHold == 0 {
		c.ProgressHold = 2_000_000
	}
	if c.CatchupWindow <= 0 {
		c.CatchupWindow = 256
	}
	if c.SubQueue <= 0 {
		c.SubQueue = 1024
	}
	if c.TailSize <= 0 {
		c.TailSize = 8192
	}
	c.Pubends = slices.Sorted(slices.Values(c.Pubends))
	return nil
}

// durableSub is a registered durable subscription.
type durableSub struct {
	sid      uint64
	id       string
	filter   match.Filter
	start    CT // where it started, per pubend
	released CT // released(s,p): the highest CT it acknowledged
	// written is released(s,p) as last handed to the driver: what reports
	// use (rule SHB 7). An acknowledgement is held back (holdAck) until
	// a batch is written anyway.
	written CT
	// roamed: registered by a reconnection from another SHB; this SHB
	// claims it (see MsgClaim) once released(s,p) >= start for every p.
	roamed bool
}

// pendingSub is a new subscription waiting for its install acknowledgement.
type pendingSub struct {
	id       string
	filter   match.Filter
	ct       CT     // the CT presented by a subscriber registered elsewhere, or nil
	ver      uint64 // the version of its first install (of this epoch)
	node     string // the subscriber's node, "" once disconnected
	session  uint64
	lastSent Tick
}

// conn is a connected subscriber's session.
type conn struct {
	sub     *durableSub
	node    string
	session uint64
	streams map[string]*connStream
	// nextSilence is when the session's next idle silence is due: each
	// session has its own phase within IdleSilence (see idleSilences).
	nextSilence Tick
	// dirty: an input changed the session's catch-up streams, so progress
	// steps them (SHB.dirty); wakeAt is when they must be stepped anyway
	// (SHB.wakes; MaxTick or 0: only when an input changes them).
	dirty  bool
	wakeAt Tick
}

// connStream is a session's position on one pubend: pos is the last tick
// conveyed to the subscriber, by a message or as a tick it does not match
// (the subscriber's CT is sent, the tick of the last message); catchup is
// nil when the subscriber is up to date (served by the constream); unacked
// holds the ticks of the events sent and not yet acknowledged, ascending.
type connStream struct {
	pos     Tick
	sent    Tick // the tick of the last message sent (the subscriber's CT); <= pos
	catchup *catchup
	unacked []Tick
	// sentAtDue is sent as it was when the session's idle silence was
	// last due (see idleSilences).
	sentAtDue Tick
}

// SHB is the subscriber hosting broker's state machine: per pubend an
// istream that merges knowledge and nacks holes, the consolidated stream
// that delivers to up-to-date subscribers and writes the PFS, and a
// catch-up stream per reconnecting subscriber.
type SHB struct {
	cfg        SHBConfig
	w          *pendingWrites
	epoch      uint64
	version    uint64
	nextSID    uint64
	epochDirty bool
	reports    uint64 // release reports sent by this incarnation (their stamp)
	// stamps: per filtering router, filtered silences stamped before its
	// stamp here were produced without some registered filter and are
	// ignored.
	stamps  map[string]Stamp
	subs    map[string]*durableSub
	pending map[string]*pendingSub
	pubs    map[string]*shbPubend
	conns   map[string]*conn
	// connOrder and subOrder cache sortedConns and sortedSubs (nil: to
	// rebuild); every change to conns or subs goes through setConn,
	// dropConn, setSub or dropSub, which reset them (setConn and dropConn
	// also keep each pubend's remotes).
	connOrder []*conn
	subOrder  []*durableSub
	// index holds every registration's filter by sid (bySID), so a D tick
	// on the constream costs a match of the index, not one per
	// registration; catching holds the sessions with a catch-up stream on
	// some pubend (catchOrder: sorted by subscription id), the only ones
	// progress may step.
	index      *match.Fast
	bySID      map[uint64]*durableSub
	matchBuf   []match.ID
	catching   map[*conn]struct{}
	catchOrder []*conn
	// catchGen counts the sessions that started catching up (a declined
	// cover is tried again after it changes; see mayCover), and lastOpen
	// is when a session last opened catching up (see held).
	catchGen uint64
	lastOpen Tick
	// dirty and wakes say which catching sessions progress steps
	// (shb_catchup_step.go; stepBuf is its buffer); stepAll steps every
	// one after every input instead, as the differential tests' reference.
	dirty      []*conn
	stepBuf    []*conn
	wakes      wakeHeap
	stepAll    bool
	out        sendBuf
	now        Tick
	lastReport Tick
	// acksHeld holds the released(s,p) raised by acknowledgements and not
	// yet written (see holdAck), since acksSince.
	acksHeld  map[subPubend]struct{}
	acksSince Tick
	// born is the time of this store's first report (Report.Born),
	// persisted with it; zero until then.
	born  Tick
	Stats SHBStats
}

// SHBStats counts what an SHB did.
type SHBStats struct {
	Delivered     int // event messages to subscribers
	Gaps          int // gap messages
	CatchupNack   int // ticks nacked by catch-up streams
	CatchupSteps  int // catch-up sessions stepped by progress (the work per input)
	CatchupCovers int // spans nacked whole for every catch-up session (tryCover)
	CoverDeclines int // spans tried as covers and found too sparse
	RemoteNacks   int // ranges nacked for subscribers registered elsewhere (reconnect anywhere)
	ClaimDrops    int // registrations dropped for a claim from another SHB
	StreamNacks   int // nack messages sent by istreams
	Overflows     int // up-to-date sessions moved to catch-up by a full queue
	PFSRecords    int // PFS records appended
	// Opened counts the sessions opened, OpenedBehind those of them that
	// opened catching up, and BehindRecords the PFS records between their
	// positions and LD when they opened: how much of their history had
	// already passed through the SHB without them.
	Opened, OpenedBehind, BehindRecords int
	// StaleIgnored counts filtered silences ignored because they were
	// filtered before a registered subscription's filter was installed.
	StaleIgnored int
}

// NewSHB recovers an SHB from its store (empty for a new one). Recovery
// starts a new epoch, persisted with the first Ready.
func NewSHB(cfg SHBConfig, store Store) (*SHB, error) {
	if err := cfg.populate(); err != nil {
		return nil, err
	}
	s := &SHB{cfg: cfg, w: newPendingWrites(store), subs: map[string]*durableSub{},
		pending: map[string]*pendingSub{}, pubs: map[string]*shbPubend{}, conns: map[string]*conn{},
		stamps: map[string]Stamp{}, lastReport: -1 << 62, acksHeld: map[subPubend]struct{}{},
		index: match.NewFast(match.FastConfig{}), bySID: map[uint64]*durableSub{}, catching: map[*conn]struct{}{}}
	if err := s.recover(); err != nil {
		return nil, fmt.Errorf("shb %s: recover: %w", cfg.Node, err)
	}
	return s, nil
}

// Step handles one message at time now.
func (s *SHB) Step(now Tick, env Envelope) error {
	s.now = now
	m := env.Msg
	var err error
	switch m.Kind {
	case MsgData, MsgSilence, MsgLost:
		err = s.knowledge(m)
	case MsgResume:
		err = s.resume(env)
	case MsgInstallAck:
		err = s.installAck(m)
	case MsgAck:
		s.ack(m)
	case MsgDisconnect:
		s.disconnect(m)
	case MsgUnsubscribe:
		s.unsubscribe(m.Sub)
	case MsgResync:
		s.sendFilters(m.Nonce)
	case MsgClaim:
		s.claim(m)
	default:
		err = fmt.Errorf("unexpected %v from %s", m.Kind, env.From)
	}
	if err != nil {
		return fmt.Errorf("shb %s: %w", s.cfg.Node, err)
	}
	if err := s.progress(); err != nil {
		return err
	}
	if err := s.checkInvariants(); err != nil {
		return fmt.Errorf("shb %s: %w", s.cfg.Node, err)
	}
	return nil
}

// Tick handles a timer firing at time now: nacks, install resends,
// catch-up nacks, idle silences and release reports.
func (s *SHB) Tick(now Tick) error {
	s.now = now
	for _, p := range s.cfg.Pubends {
		s.nackIstream(s.pubs[p])
	}
	for _, id := range slices.Sorted(mapKeys(s.pending)) {
		ps := s.pending[id]
		if now-ps.lastSent >= s.cfg.InstallRetry {
			s.sendInstall(ps)
		}
	}
	s.idleSilences()
	if now-s.lastReport >= s.cfg.ReportInterval {
		s.lastReport = now
		s.report()
		s.sendClaims()
		for _, p := range s.cfg.Pubends {
			s.pruneFetches(s.pubs[p])
		}
	}
	err := s.progress()
	if err == nil {
		err = s.checkInvariants()
	}
	if err != nil {
		return fmt.Errorf("shb %s: %w", s.cfg.Node, err)
	}
	return nil
}

// Ready returns the writes to persist (always synced) and the messages to
// send after them. LD progress over silence is left out while it may be
// held (shbPubend.holdMeta), unless the batch has writes anyway.
func (s *SHB) Ready() Ready {
	if s.epochDirty {
		s.w.set(shbEpochKey(), encodeTicks(Tick(s.epoch), Tick(s.version), Tick(s.nextSID)))
		s.epochDirty = false
	}
	s.flushMetas(false)
	rd := Ready{Writes: s.w.take(), Msgs: s.out.take()}
	rd.Sync = !rd.Writes.Empty()
	return rd
}

// Deferred returns the LD progress held back (Deferrer): another broker's
// batch is synced anyway, so it rides in it.
func (s *SHB) Deferred() *Batch {
	s.flushMetas(true)
	if s.w.empty() {
		return nil
	}
	return s.w.take()
}

// flushMetas writes each pubend's meta that changed, and every held one
// once the batch has writes (force: it has, elsewhere); so with the
// acknowledgements held (holdAck).
func (s *SHB) flushMetas(force bool) {
	if len(s.acksHeld) > 0 && (force || !s.w.empty() || s.cfg.ProgressHold < 0 || s.now-s.acksSince >= s.cfg.ProgressHold) {
		s.writeAcks()
	}
	for pass := 0; pass < 2; pass++ {
		for _, p := range s.cfg.Pubends {
			s.pubs[p].flushMeta(s.now, force || !s.w.empty(), s.cfg.ProgressHold)
		}
		if force || s.w.empty() {
			return
		}
		force = true
	}
}

func (s *SHB) send(to string, m Msg) {
	s.out.add(Envelope{From: s.cfg.Node, To: to, Msg: m})
}

func (s *SHB) setSub(d *durableSub) {
	s.dropSub(d.id)
	s.subs[d.id], s.subOrder, s.bySID[d.sid] = d, nil, d
	_ = s.index.Insert(match.ID(d.sid), d.filter) // sids are never reused
}

func (s *SHB) dropSub(id string) {
	if d, ok := s.subs[id]; ok {
		delete(s.bySID, d.sid)
		_ = s.index.Delete(match.ID(d.sid))
	}
	delete(s.subs, id)
	s.subOrder = nil
}

// sortedSubs returns the registered subscriptions in sid order.
func (s *SHB) sortedSubs() []*durableSub {
	if s.subOrder == nil {
		s.subOrder = make([]*durableSub, 0, len(s.subs))
		for _, d := range s.subs {
			s.subOrder = append(s.subOrder, d)
		}
		slices.SortFunc(s.subOrder, func(a, b *durableSub) int { return cmp.Compare(a.sid, b.sid) })
	}
	return s.subOrder
}

// LD returns latestDelivered of pubend p.
func (s *SHB) LD(p string) Tick { return s.pubs[p].ld }

// PFSRecords returns the number of PFS records of p not chopped.
func (s *SHB) PFSRecords(p string) uint64 { return s.pubs[p].pfs.records() }
