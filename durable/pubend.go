package durable

import (
	"fmt"
	"maps"
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// PubendConfig configures a pubend at its PHB. Zero values of the tunables
// take the defaults given on each field.
type PubendConfig struct {
	// ID names the pubend.
	ID string
	// Node is the PHB's node id, the sender of every message.
	Node string
	// Downstream lists the neighbours that receive the pubend's knowledge.
	Downstream []string
	// SHBs lists every SHB below the pubend; nothing is released until each
	// has reported.
	SHBs []string
	// LearnSHBs makes every SHB that sends an install (its Origin) or a
	// release report a member too, as if listed in SHBs, persisted; AddSHB
	// adds one the driver learned of. An install is acknowledged only once
	// its SHB is a member on disk, so no tick above a new subscription's
	// start is released before its SHB reported it released.
	LearnSHBs bool
	// Lease is how far ahead of the highest announced tick the high-water
	// mark is persisted (default 1 s).
	Lease Tick
	// SilenceInterval is the period of silence announcements while events
	// flow (default 10 ms).
	SilenceInterval Tick
	// IdleSilenceInterval is the period of silence announcements once no
	// event was published for that long (default 100 ms): an idle pubend
	// sends ten times fewer messages, at the cost of subscribers' CTs
	// lagging by up to this much. It is never below SilenceInterval.
	IdleSilenceInterval Tick
	// DedupExpiry, if positive, forgets the dedup entry of a publisher that
	// has not published for that long (rule PHB 7). It must be far longer
	// than any publisher's resend window: a publisher returning after it
	// may have its unacknowledged events logged twice. Zero keeps entries
	// forever.
	DedupExpiry Tick
	// MaxRetain enables early release: a tick at or below every SHB's Td
	// older than MaxRetain becomes L. Zero disables it.
	MaxRetain Tick
	// DropAfter, if positive, drops an SHB from which no release report
	// came for that long (rule PHB 6): release no longer waits for it, so
	// its subscribers, up to date or not, get gaps for what is released
	// meanwhile. The drop is persisted and listed by Dropped; an SHB that
	// reports again is taken back. Zero never drops.
	DropAfter Tick
	// ProgressHold is how long the reports taken and a release over
	// silent ticks may wait to be written with other writes (the pubend's
	// own, or another broker's in the same group commit) before they are
	// written alone (default 2 x Lease, so an idle pubend's renewal of its
	// high-water mark, every Lease, always takes them first and they cost
	// no sync of their own). See writeHeld for why a crash that forgets
	// them is safe. Negative: never held.
	ProgressHold Tick
	// WipeGrace is how long release keeps holding at the last report of
	// a member SHB's previous store after it came back with an empty
	// disk (see pubend_wiped.go): its subscribers that come back within
	// it miss nothing, later ones get a gap. Zero holds until the SHB is
	// dropped (DropAfter) or for ever.
	WipeGrace Tick
}

func (c *PubendConfig) populate() error {
	if c.ID == "" || c.Node == "" {
		return fmt.Errorf("pubend config: ID and Node are required")
	}
	if c.Lease <= 0 {
		c.Lease = 1_000_000
	}
	if c.SilenceInterval <= 0 {
		c.SilenceInterval = 10_000
	}
	if c.IdleSilenceInterval <= 0 {
		c.IdleSilenceInterval = 100_000
	}
	c.IdleSilenceInterval = max(c.IdleSilenceInterval, c.SilenceInterval)
	if c.ProgressHold == 0 {
		c.ProgressHold = 2 * c.Lease
	}
	c.SHBs = slices.Sorted(slices.Values(c.SHBs))
	return nil
}

// dedupEntry is a publisher's highest logged sequence, its tick, and when
// the publisher last published.
type dedupEntry struct {
	seq  uint64
	tick Tick
	last Tick
}

// logged is an event appended to the current batch, announced after sync.
type logged struct {
	tick  Tick
	event match.Event
}

// Pubend is the state machine of one pubend at its PHB: it assigns ticks,
// logs each event once (deduplicating resent publishes), announces
// knowledge downstream after the log is synced, answers nacks from the log
// and releases ticks.
type Pubend struct {
	cfg          PubendConfig
	w            *pendingWrites
	ticker       *Ticker
	lost         Tick
	dedup        map[string]dedupEntry
	reports      map[string]Report
	batch        []logged // appended since the last Ready, in tick order
	out          sendBuf
	lastSilence  Tick // time of the last silence announcement
	lastEvent    Tick // time of the last event logged by this incarnation
	lastLost     Tick // time of the last lost announcement
	metaDirty    bool
	reportsDirty map[string]bool // reports (and stamps) taken and not yet written
	// lostHeld: the L prefix moved over silent ticks only and is not yet
	// written; heldAt is when held writes were last written, now the time
	// of the last Step or Tick (see writeHeld).
	lostHeld bool
	heldAt   Tick
	now      Tick
	heard    map[string]Tick      // per SHB, when its last report came (soft)
	dropped  map[string]bool      // SHBs dropped for their absence (persisted)
	answers  map[string][]Range   // nacked ranges not answered yet, per asker (see answerNacks)
	answered map[string]Range     // per asker still being answered, the span answered so far (see nack)
	born     map[string]Tick      // per SHB, the Born of its store (persisted)
	wiped    map[string]wipedHold // per wiped SHB, its previous store's hold (persisted)
	// lostFrom starts the silent end of the L prefix: nothing was logged
	// in [lostFrom, lost] (MsgLost.From). logged holds the ticks this
	// incarnation logged above lost, ascending, and recovered the ticker's
	// mark at recovery (every tick logged before it is at or below it),
	// so release finds the last logged tick it passes without reading the
	// log, except over what an earlier incarnation logged.
	lostFrom  Tick
	logged    []Tick
	recovered Tick
	// stamps holds each member's newest report stamp (MsgRelease Epoch
	// and Version; persisted), so the newest report is taken as it is.
	stamps map[string]reportStamp
	// Stats counts what the pubend did.
	Stats PubendStats
}

// PubendStats counts what a pubend did.
type PubendStats struct {
	SHBDrops int // SHBs dropped for their absence (rule PHB 6)
	Wipes    int // member SHBs seen back with an empty disk
}

// NewPubend recovers a pubend from its store (empty for a new one).
func NewPubend(cfg PubendConfig, store Store) (*Pubend, error) {
	if err := cfg.populate(); err != nil {
		return nil, err
	}
	p := &Pubend{cfg: cfg, w: newPendingWrites(store), dedup: map[string]dedupEntry{}, lastEvent: -1 << 62,
		reports: map[string]Report{}, reportsDirty: map[string]bool{},
		heard: map[string]Tick{}, dropped: map[string]bool{}, born: map[string]Tick{}, wiped: map[string]wipedHold{},
		stamps: map[string]reportStamp{}}
	if err := p.recover(store); err != nil {
		return nil, fmt.Errorf("pubend %s: recover: %w", cfg.ID, err)
	}
	return p, nil
}

func (p *Pubend) recover(store Store) error {
	meta, err := getTicks(store.Get, phbMetaKey(p.cfg.ID), 2)
	if err != nil {
		return err
	}
	p.ticker = NewTicker(meta[0], p.cfg.Lease)
	p.lost, p.recovered = meta[1], meta[0]
	if err := p.recoverLostFrom(store); err != nil {
		return err
	}
	if err := p.scanTable('d', 3, func(k string, v []Tick) {
		p.dedup[k] = dedupEntry{seq: uint64(v[0]), tick: v[1], last: v[2]}
	}); err != nil {
		return err
	}
	if err := p.scanTable('r', 2, func(k string, v []Tick) {
		p.reports[k] = Report{SHB: k, Tr: v[0], Td: v[1]}
	}); err != nil {
		return err
	}
	if err := p.scanTable('n', 1, func(k string, _ []Tick) {
		if !contains(p.cfg.SHBs, k) {
			p.cfg.SHBs = append(p.cfg.SHBs, k)
		}
	}); err != nil {
		return err
	}
	slices.Sort(p.cfg.SHBs)
	if err := p.recoverWiped(); err != nil {
		return err
	}
	if err := p.scanTable('q', 2, func(k string, v []Tick) {
		p.stamps[k] = reportStamp{epoch: uint64(v[0]), version: uint64(v[1])}
	}); err != nil {
		return err
	}
	return p.scanTable('x', 1, func(k string, _ []Tick) { p.dropped[k] = true })
}

// AddSHB makes shb a member: release waits for its reports from now on
// (until it reported, nothing more is released). The membership is
// persisted with the next Ready. It reports whether shb is new.
func (p *Pubend) AddSHB(shb string) bool {
	if shb == "" || contains(p.cfg.SHBs, shb) {
		return false
	}
	p.cfg.SHBs = append(p.cfg.SHBs, shb)
	slices.Sort(p.cfg.SHBs)
	p.w.set(phbMemberKey(p.cfg.ID, shb), encodeTicks(0))
	return true
}

// SHBs returns the members release waits for, sorted.
func (p *Pubend) SHBs() []string { return slices.Clone(p.cfg.SHBs) }

// Reports returns the release report of each member that sent one.
func (p *Pubend) Reports() map[string]Report { return maps.Clone(p.reports) }

// scanTable reads a table of n-tick records keyed by string.
func (p *Pubend) scanTable(table byte, n int, fn func(string, []Tick)) error {
	pre := keyPrefix(rolePHB, table, p.cfg.ID)
	var derr error
	err := p.w.store.Scan(pre, prefixEnd(pre), func(k, v []byte) bool {
		ts, err := decodeTicks(v, n)
		if err != nil {
			derr = fmt.Errorf("key %x: %w", k, err)
			return false
		}
		fn(string(k[len(pre):]), ts)
		return true
	})
	if err == nil {
		err = derr
	}
	return err
}

// ID returns the pubend's name.
func (p *Pubend) ID() string { return p.cfg.ID }

// Lost returns the L prefix.
func (p *Pubend) Lost() Tick { return p.lost }

// LastAnnounced returns the highest tick announced downstream.
func (p *Pubend) LastAnnounced() Tick { return p.ticker.LastAnnounced() }

// Step handles one message at time now.
func (p *Pubend) Step(now Tick, env Envelope) error {
	p.now = now
	m := env.Msg
	switch m.Kind {
	case MsgHello:
		p.send(env.From, Msg{Kind: MsgHelloAck, Publisher: m.Publisher, Seq: p.dedup[m.Publisher].seq})
	case MsgPublish:
		p.publish(now, env.From, m)
	case MsgNack:
		return p.nack(env.From, m)
	case MsgRelease:
		p.report(now, m, m.Born)
		p.release(now)
	case MsgFilters, MsgUninstall, MsgClaim, MsgInstallAck:
		// A PHB does not filter and hosts no subscriber: nothing to do.
	case MsgInstall:
		if p.cfg.LearnSHBs && m.Origin != "" {
			p.AddSHB(m.Origin)
		}
		if contains(p.cfg.SHBs, m.Origin) {
			p.bornOf(now, m.Origin, m.Born)
		}
		// The acknowledgement echoes the install's stamp, so that the hop
		// takes it only as the answer to that install (see MsgInstallAck).
		p.send(env.From, Msg{Kind: MsgInstallAck, Sub: m.Sub, CT: CT{p.cfg.ID: p.ticker.LastAnnounced()},
			Epoch: m.Epoch, Version: m.Version})
	default:
		return fmt.Errorf("pubend %s: unexpected %v from %s", p.cfg.ID, m.Kind, env.From)
	}
	return nil
}

// Tick handles a timer firing at time now: silence and early release.
// It returns an error only if answering nacks could not read the log.
func (p *Pubend) Tick(now Tick) error {
	p.now = now
	if now-p.lastSilence >= p.silenceInterval(now) {
		p.silence(now)
	}
	p.dropAbsent(now)
	p.endWipeGrace(now)
	err := p.answerNacks()
	p.release(now)
	p.expireDedup(now)
	if p.lost > 0 && now-p.lastLost >= 10*p.cfg.SilenceInterval {
		// Repeat the L prefix now and then: the first announcement may
		// have been lost with the connection, or with a crash after the
		// prefix was persisted but before it was sent.
		p.lastLost = now
		p.broadcast(p.lostMsg())
	}
	return err
}

// silenceInterval is the adaptive silence period: SilenceInterval while
// events flow, IdleSilenceInterval once none came for that long.
func (p *Pubend) silenceInterval(now Tick) Tick {
	if now-p.lastEvent < p.cfg.IdleSilenceInterval {
		return p.cfg.SilenceInterval
	}
	return p.cfg.IdleSilenceInterval
}

// Ready returns the writes to persist and the messages to send after them.
// Held writes (see writeHeld) are in it only if it has writes of its own
// or they have waited ProgressHold.
func (p *Pubend) Ready() Ready {
	p.announceBatch()
	if p.metaDirty || !p.w.empty() || p.now-p.heldAt >= p.cfg.ProgressHold {
		p.writeHeld()
	}
	rd := Ready{Writes: p.w.take(), Msgs: p.out.take()}
	rd.Sync = !rd.Writes.Empty()
	return rd
}

// Deferred returns the held writes (Deferrer): another broker's batch is
// synced anyway, so they ride in it.
func (p *Pubend) Deferred() *Batch {
	p.writeHeld()
	if p.w.empty() {
		return nil
	}
	return p.w.take()
}

// writeHeld writes the meta (the high-water mark, L and lostFrom) if it
// changed, and the reports taken since the last write with their stamps.
//
// Only two kinds of change wait for it: the reports taken (report), and
// an L prefix moved over silent ticks only (release). Everything else
// (the log, dedup entries, the high-water mark, members, Born and wiped
// holds, drops, a release that deletes a logged tick) is written with the
// Ready that makes it, and takes the held writes with it, so no write on
// disk was computed from a report that is not.
//
// What a crash before the held writes are synced loses, and why that is
// safe:
//   - Reports taken: the pubend restarts with each member's last written
//     report and stamp, as if the later ones had been lost on the way,
//     which the protocol already survives: members report again every
//     report interval, and release waits for them.
//   - A release over silent ticks (lost moved from X to X'): L is back at
//     X, and release moves it again once the reports are back. Its
//     announcement may have left: downstream knows ticks up to X' as L.
//     No event was logged in (X, X'] and none can be after the restart
//     (every announced tick, X' included, is at or below the written
//     high-water mark, and the restarted ticker assigns above it), so
//     the log and the nack answers say S for them, which is what the
//     announcement said of their content: MsgLost.From (nothing logged
//     from there up to X') stays true, and a lower L announced after
//     the restart is below what SHBs know and changes nothing.
func (p *Pubend) writeHeld() {
	p.heldAt = p.now
	if p.metaDirty || p.lostHeld {
		p.w.set(phbMetaKey(p.cfg.ID), encodeTicks(p.ticker.Mark(), p.lost))
		p.w.set(phbLostFromKey(p.cfg.ID), encodeTicks(p.lostFrom))
		p.metaDirty, p.lostHeld = false, false
	}
	for _, shb := range slices.Sorted(mapKeys(p.reportsDirty)) {
		r, ok := p.reports[shb]
		if !ok {
			continue // forgotten since (a new store of the SHB)
		}
		p.w.set(phbReportKey(p.cfg.ID, shb), encodeTicks(r.Tr, r.Td))
		if st, ok := p.stamps[shb]; ok {
			p.w.set(phbStampKey(p.cfg.ID, shb), encodeTicks(Tick(st.epoch), Tick(st.version)))
		}
	}
	clear(p.reportsDirty)
}

func (p *Pubend) send(to string, m Msg) {
	m.Pubend = p.cfg.ID
	p.out.add(Envelope{From: p.cfg.Node, To: to, Msg: m})
}

func (p *Pubend) broadcast(m Msg) {
	for _, d := range p.cfg.Downstream {
		p.send(d, m)
	}
}

// cover makes sure the high-water mark covers upto before it is announced.
func (p *Pubend) cover(upto Tick) {
	if _, raised := p.ticker.Cover(upto); raised {
		p.metaDirty = true
	}
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
