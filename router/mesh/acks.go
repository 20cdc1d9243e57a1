package mesh

import (
	"slices"

	"github.com/sift-pubsub/sift/internal/wire"
)

// pending is an acknowledgement owed, either to a link (a RoutesAck for
// the peer's session gen up to seq) or to a local client (Ready for ref),
// once every link in need has acknowledged up to the given seq.
type pending struct {
	link   Link // owed to this link; 0 for a client
	gen    uint64
	seq    uint64
	client Client
	ref    uint64
	need   []need
}

type need struct {
	link Link
	seq  uint64
}

// wait records p, owed once every link up except from has acknowledged
// everything sent to it so far.
func (m *Mesh) wait(p pending, from Link) {
	for _, l := range m.sortedLinks() {
		if l.id != from && l.ackedSeq < l.sentSeq {
			p.need = append(p.need, need{l.id, l.sentSeq})
		}
	}
	m.pending = append(m.pending, p)
}

// releaseNew is release after wait alone: nothing older can have become
// due, so only the item just added is looked at, unless an older one is
// owed to the same link (acks go out in order).
func (m *Mesh) releaseNew(out *Output) {
	p := m.pending[len(m.pending)-1]
	if !m.met(p) {
		return
	}
	if p.link != 0 {
		for _, q := range m.pending[:len(m.pending)-1] {
			if q.link == p.link {
				m.release(out)
				return
			}
		}
		out.send(p.link, &wire.RoutesAck{Gen: p.gen, Seq: p.seq})
	} else {
		out.Ready = append(out.Ready, Ready{p.client, p.ref})
	}
	m.pending = m.pending[:len(m.pending)-1]
}

// release emits every pending acknowledgement whose needs are met (a link
// that went down is no longer needed), one RoutesAck per link (the latest:
// acks are cumulative, so one owed to a link waits behind every earlier
// one owed to the same link), and forgets those owed to links that went
// down.
func (m *Mesh) release(out *Output) {
	if len(m.pending) == 0 {
		return
	}
	keep := m.pending[:0]
	var acks map[Link]*wire.RoutesAck
	blocked := map[Link]bool{}
	var order []Link
	for _, p := range m.pending {
		if p.link != 0 && m.links[p.link] == nil {
			continue
		}
		if (p.link != 0 && blocked[p.link]) || !m.met(p) {
			blocked[p.link] = p.link != 0
			keep = append(keep, p)
			continue
		}
		if p.link == 0 {
			out.Ready = append(out.Ready, Ready{p.client, p.ref})
			continue
		}
		if acks == nil {
			acks = make(map[Link]*wire.RoutesAck)
		}
		if acks[p.link] == nil {
			order = append(order, p.link)
		}
		acks[p.link] = &wire.RoutesAck{Gen: p.gen, Seq: p.seq}
	}
	clear(m.pending[len(keep):])
	m.pending = keep
	for _, l := range order {
		out.send(l, acks[l])
	}
}

func (m *Mesh) met(p pending) bool {
	for _, n := range p.need {
		if l := m.links[n.link]; l != nil && l.ackedSeq < n.seq {
			return false
		}
	}
	return true
}

// dropWaits forgets the Ready owed to a client that went away.
func (m *Mesh) dropWaits(c Client) {
	m.pending = slices.DeleteFunc(m.pending, func(p pending) bool { return p.link == 0 && p.client == c })
}
