package mesh

import (
	"cmp"
	"slices"

	"github.com/sift-pubsub/sift/internal/wire"
)

// pending is an acknowledgement owed, either to a link (a RoutesAck for
// the peer's session gen up to seq) or to a local client (Ready for ref),
// once every link it waits for has acknowledged up to the seq it needs.
type pending struct {
	link   Link // owed to this link; 0 for a client
	gen    uint64
	seq    uint64
	client Client
	ref    uint64
	advert bool   // Ready for the client's advertisement ref
	batch  bool   // Ready for the client's batch of subscriptions from ref
	order  uint64 // creation order, for a stable order of Ready
	left   int    // links still to acknowledge
	off    bool   // cancelled (client gone or unsubscribed) or link gone
}

// waiter is a pending acknowledgement waiting for one link to acknowledge
// up to seq.
type waiter struct {
	p   *pending
	seq uint64
}

// acks indexes the pending acknowledgements so that each RoutesAck costs
// only what it releases: per link, the waiters for its acknowledgements in
// seq order (seqs sent only grow); per link, the RoutesAcks owed to it in
// order (they go out in order, cumulatively); per client, the Ready owed.
type acks struct {
	waiting map[Link][]waiter
	owed    map[Link][]*pending
	ready   map[Client]map[readyKey]*pending
	order   uint64
}

// readyKey names a Ready owed to a client: for its subscription or its
// advertisement ref.
type readyKey struct {
	ref    uint64
	advert bool
	batch  bool
}

func newAcks() acks {
	return acks{
		waiting: make(map[Link][]waiter),
		owed:    make(map[Link][]*pending),
		ready:   make(map[Client]map[readyKey]*pending),
	}
}

// settled collects what became due during one input.
type settled struct {
	ready []*pending
	links []Link // links whose owed queue may have a met head
}

// wait records p, owed once every link up except from has acknowledged
// everything sent to it so far, and emits it at once if nothing is owed.
func (m *Mesh) wait(p pending, from Link, out *Output) {
	a := &m.acks
	a.order++
	p.order = a.order
	pp := &p
	for _, l := range m.sortedLinks() {
		switch {
		case l.id == from:
		case l.stream != nil: // snapstream.go: wait for the whole snapshot
			a.waiting[l.id] = append(a.waiting[l.id], waiter{pp, streamEnd})
			pp.left++
		case l.ackedSeq < l.sentSeq:
			a.waiting[l.id] = append(a.waiting[l.id], waiter{pp, l.sentSeq})
			pp.left++
		}
	}
	if p.link != 0 {
		a.owed[p.link] = append(a.owed[p.link], pp)
	} else {
		if a.ready[p.client] == nil {
			a.ready[p.client] = make(map[readyKey]*pending)
		}
		a.ready[p.client][readyKey{p.ref, p.advert, p.batch}] = pp
	}
	if pp.left == 0 {
		var s settled
		s.due(pp)
		m.emit(&s, out)
	}
}

// acked releases what waited for link l's acknowledgements up to its
// acked seq.
func (m *Mesh) acked(l *link, out *Output) {
	q := m.acks.waiting[l.id]
	var s settled
	i := 0
	for ; i < len(q) && q[i].seq <= l.ackedSeq; i++ {
		if q[i].p.left--; q[i].p.left == 0 {
			s.due(q[i].p)
		}
	}
	if i == len(q) {
		delete(m.acks.waiting, l.id)
	} else {
		m.acks.waiting[l.id] = q[i:]
	}
	m.emit(&s, out)
}

// linkGone stops waiting for link id (what waited for it may become due)
// and forgets the acknowledgements owed to it.
func (m *Mesh) linkGone(id Link, out *Output) {
	for _, p := range m.acks.owed[id] {
		p.off = true
	}
	delete(m.acks.owed, id)
	var s settled
	for _, w := range m.acks.waiting[id] {
		if w.p.left--; w.p.left == 0 {
			s.due(w.p)
		}
	}
	delete(m.acks.waiting, id)
	m.emit(&s, out)
}

// cancelReady forgets the Ready owed for a client's subscription or
// advertisement (it was withdrawn before it was installed everywhere).
func (m *Mesh) cancelReady(c Client, k readyKey) {
	if p := m.acks.ready[c][k]; p != nil {
		p.off = true
		delete(m.acks.ready[c], k)
		if len(m.acks.ready[c]) == 0 {
			delete(m.acks.ready, c)
		}
	}
}

// dropWaits forgets every Ready owed to a client that went away.
func (m *Mesh) dropWaits(c Client) {
	for _, p := range m.acks.ready[c] {
		p.off = true
	}
	delete(m.acks.ready, c)
}

func (s *settled) due(p *pending) {
	switch {
	case p.off:
	case p.link == 0:
		s.ready = append(s.ready, p)
	default:
		s.links = append(s.links, p.link)
	}
}

// emit sends what became due: Ready in creation order, and per link (in
// id order) one RoutesAck for the latest of the acknowledgements at the
// head of its queue whose needs are all met.
func (m *Mesh) emit(s *settled, out *Output) {
	slices.SortFunc(s.ready, func(a, b *pending) int { return cmp.Compare(a.order, b.order) })
	for _, p := range s.ready {
		out.Ready = append(out.Ready, Ready{Client: p.client, Ref: p.ref, Advert: p.advert, Batch: p.batch})
		m.cancelReady(p.client, readyKey{p.ref, p.advert, p.batch})
	}
	slices.Sort(s.links)
	for _, id := range slices.Compact(s.links) {
		q := m.acks.owed[id]
		i := 0
		for i < len(q) && q[i].left == 0 {
			i++
		}
		if i == 0 {
			continue
		}
		last := q[i-1]
		out.send(id, &wire.RoutesAck{Gen: last.gen, Seq: last.seq})
		if i == len(q) {
			delete(m.acks.owed, id)
		} else {
			m.acks.owed[id] = q[i:]
		}
	}
}

// pendingCount is the number of acknowledgements still owed (for tests).
func (m *Mesh) pendingCount() int {
	n := 0
	for _, q := range m.acks.owed {
		n += len(q)
	}
	for _, r := range m.acks.ready {
		n += len(r)
	}
	return n
}
