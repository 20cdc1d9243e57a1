package durable

import (
	"github.com/sift-pubsub/sift/match"
)

// shbPubend is an SHB's state for one pubend: the istream, latestDelivered
// (LD), the L prefix heard of, the PFS and the constream's tail.
type shbPubend struct {
	id        string
	in        *Stream
	ld        Tick
	lost      Tick
	lostFrom  Tick // MsgLost.From of the L prefix (0: not known; see gapToLost)
	pfs       *pfs
	tail      *tail
	qSince    Tick // when the istream's curiosity became non-empty (-1: empty)
	nack      retry
	nackedAt  Tick // the doubt horizon when the istream last nacked
	metaDirty bool
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
}

func newSHBPubend(id string, w *pendingWrites, tailSize int) *shbPubend {
	return &shbPubend{id: id, in: NewStream(0), pfs: newPFS(id, w, pfsRecent), tail: newTail(tailSize),
		qSince: -1, w: w, remotes: map[*conn]struct{}{}, fetch: map[Tick]*retry{}}
}

// flushMeta writes LD, the L prefix and the PFS counters if they changed.
func (p *shbPubend) flushMeta() {
	if !p.metaDirty {
		return
	}
	p.w.set(shbMetaKey(p.id), encodeTicks(p.ld, p.lost, p.pfs.lastTS, Tick(p.pfs.next), Tick(p.pfs.first)))
	p.w.set(shbLostFromKey(p.id), encodeTicks(p.lostFrom))
	p.metaDirty = false
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
