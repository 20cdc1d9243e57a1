package durable

import (
	"github.com/sift-pubsub/sift/match"
)

// shbPubend is an SHB's state for one pubend: the istream, latestDelivered
// (LD), the L prefix heard of, the PFS and the constream's tail.
type shbPubend struct {
	id       string
	in       *Stream
	ld       Tick
	lost     Tick
	lostFrom Tick // MsgLost.From of the L prefix (0: not known; see gapToLost)
	pfs      *pfs
	tail     *tail
	// fetched keeps the events nacks brought back (answers to catch-up
	// refetches), TailSize of them, oldest evicted first, for the
	// sessions that want them later (see SHB.atHand).
	fetched   *tail
	qSince    Tick // when the istream's curiosity became non-empty (-1: empty)
	nack      retry
	nackedAt  Tick // the doubt horizon when the istream last nacked or saw it move
	metaDirty bool
	// written is the meta last handed to the driver (what reports and idle
	// silences may use: messages leave after it is synced), and wroteAt
	// when; mustWrite says a message this Ready sends conveys a tick above
	// written.ld, so the meta may not be held back (see holdMeta).
	written   shbMeta
	wroteAt   Tick
	mustWrite bool
	w         *pendingWrites
	// remotes holds the sessions whose catch-up stream on this pubend is
	// in its remote phase (kept by setConn, dropConn and endRemote).
	remotes map[*conn]struct{}
	// fetch holds the nack retry state of every tick catch-up sessions
	// asked for and did not get yet, shared by the sessions (nackCatchup).
	fetch map[Tick]*retry
	// covers holds the spans nacked whole for every catch-up session
	// (tryCover).
	covers []cover
	// coverStreak counts the covers sent since the last answer to a
	// refetch: their lives back off (coverLifeFor).
	coverStreak int
}

func newSHBPubend(id string, w *pendingWrites, tailSize int) *shbPubend {
	return &shbPubend{id: id, in: NewStream(0), pfs: newPFS(id, w, pfsRecent), tail: newTail(tailSize), fetched: newTail(tailSize),
		qSince: -1, w: w, remotes: map[*conn]struct{}{}, fetch: map[Tick]*retry{}}
}

// shbMeta is what an SHB persists of one pubend besides the PFS records:
// LD, the L prefix heard of with its silent start, and the PFS counters.
type shbMeta struct {
	ld, lost, lostFrom, lastTS Tick
	next, first                uint64
}

func (p *shbPubend) meta() shbMeta {
	return shbMeta{ld: p.ld, lost: p.lost, lostFrom: p.lostFrom, lastTS: p.pfs.lastTS, next: p.pfs.next, first: p.pfs.first}
}

// flushMeta writes LD, the L prefix and the PFS counters if they changed,
// unless holdMeta lets them wait (force: the batch carries other writes
// anyway, so they ride in it at no cost).
func (p *shbPubend) flushMeta(now Tick, force bool, hold Tick) {
	if !p.metaDirty {
		p.mustWrite = false
		return
	}
	cur := p.meta()
	if !force && hold > 0 && p.holdMeta(cur) && now-p.wroteAt < hold {
		return
	}
	p.w.set(shbMetaKey(p.id), encodeTicks(cur.ld, cur.lost, cur.lastTS, Tick(cur.next), Tick(cur.first)))
	p.w.set(shbLostFromKey(p.id), encodeTicks(cur.lostFrom))
	p.written, p.wroteAt = cur, now
	p.metaDirty, p.mustWrite = false, false
}

// holdMeta reports whether the meta may wait for a later batch: when it
// only moved LD (and the L prefix) over ticks that gave no PFS record,
// and no message to a subscriber conveys a tick above the written LD.
//
// Why a crash that forgets such progress is safe: the store then holds an
// older LD, L and lostFrom, and the same PFS. Every tick the lost
// progress passed was, for this SHB, silent, L, or a D tick no
// registration wanted (a PFS record would have changed lastTS); a new
// registration is a write of its own, which takes the meta with it, so no
// registration on disk starts above the written LD. Release reports use
// written.ld only (rule SHB 7: messages leave after the batch that wrote
// it), idle silences too, and any other message conveying a tick above it
// sets mustWrite, so no subscriber's CT and no pubend's release is above
// the LD on disk. After the restart the istream starts at that LD and
// asks for the ticks above it again: the answers are the same silences
// (or L) and D ticks matching nothing, so the constream passes them again
// with the same result. The L prefix is announced again by the pubend
// every few silence intervals. The cost is a repeated nack round trip.
func (p *shbPubend) holdMeta(cur shbMeta) bool {
	w := p.written
	return !p.mustWrite && cur.lastTS == w.lastTS && cur.next == w.next && cur.first == w.first
}

// conveys records that a message to a subscriber conveys tick t of this
// pubend: the meta must be written with it if t is above the written LD.
func (p *shbPubend) conveys(t Tick) {
	if t > p.written.ld {
		p.mustWrite = true
	}
}

// tail is a bounded in-memory map of recent matched events, oldest evicted
// first.
type tail struct {
	size   int
	order  []Tick
	events map[Tick]match.Event
}

func newTail(size int) *tail { return &tail{size: size, events: map[Tick]match.Event{}} }

func (t *tail) add(tick Tick, e match.Event) {
	if _, ok := t.events[tick]; ok {
		return
	}
	t.events[tick] = e
	t.order = append(t.order, tick)
	if len(t.order) > t.size {
		delete(t.events, t.order[0])
		t.order = t.order[1:]
	}
}

func (t *tail) get(tick Tick) (match.Event, bool) {
	e, ok := t.events[tick]
	return e, ok
}
