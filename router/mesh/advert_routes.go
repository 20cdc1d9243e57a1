package mesh

import (
	"fmt"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// receiveAdverts validates an Adverts message completely, then applies it:
// the link's held advertisements change, the change floods to the other
// links, the peer is sent the forwarded filters that now overlap its
// advertisements (a withdrawal takes nothing back: see withdrawals in the
// package doc), and the message is acknowledged once the other links
// acknowledged what it made this router send them. The Routes for the peer precede the
// acknowledgement on the same stream, so when it arrives they are
// installed there.
func (m *Mesh) receiveAdverts(l *link, a *wire.Adverts, out *Output) error {
	if m.adv == nil {
		return fmt.Errorf("adverts from %s: %s runs advertisements (--advertise) and this router (%s) does not; both ends of a link must agree", l.peer, l.peer, m.name)
	}
	if err := l.checkSeq("adverts", a.Gen, a.Seq); err != nil {
		return err
	}
	la := m.adv.links[l.id]
	change, err := la.advertChange(a)
	if err != nil {
		return fmt.Errorf("adverts from %s seq %d: %w", l.peer, a.Seq, err)
	}
	l.peerGen, l.recvSeq = a.Gen, a.Seq
	var added []match.Filter
	for _, text := range sortedKeys(change) {
		if h := change[text]; h.n > 0 {
			la.held[text] = h.f
			added = append(added, h.f)
		} else {
			delete(la.held, text)
		}
	}
	m.floodAdverts(change, out)
	m.sendOverlapping(l, la, added, out)
	if a.Snapshot || len(a.Add) > 0 || len(a.Remove) == 0 {
		m.barrier(out, l.id)
	}
	m.wait(pending{link: l.id, gen: a.Gen, seq: a.Seq}, l.id, out)
	return nil
}

// checkSeq checks that a Routes or Adverts message (they share the link's
// sequence) is the next one of the peer's session.
func (l *link) checkSeq(what string, gen, seq uint64) error {
	if l.recvSeq > 0 && gen != l.peerGen {
		return fmt.Errorf("%s from %s: session %d, expected %d", what, l.peer, gen, l.peerGen)
	}
	if seq != l.recvSeq+1 {
		return fmt.Errorf("%s from %s: seq %d after %d", what, l.peer, seq, l.recvSeq)
	}
	return nil
}

// checkFirstAdverts refuses a peer whose first message is not an Adverts
// snapshot while this router runs advertisements: the peer does not, and
// would never tell this router what it publishes.
func (m *Mesh) checkFirstAdverts(l *link) error {
	if m.adv != nil && l.recvSeq == 0 {
		return fmt.Errorf("routes from %s before its adverts: this router (%s) runs advertisements (--advertise) and %s does not; both ends of a link must agree", l.peer, m.name, l.peer)
	}
	return nil
}

// advertChange parses a into the net change of the link's held
// advertisements (n = +1 or -1 per canonical text), without changing
// anything. Held advertisements are a set: adding one held or removing
// one not held is an error.
func (la *linkAdverts) advertChange(a *wire.Adverts) (map[string]*heldFilter, error) {
	next := make(map[string]match.Filter, len(la.held))
	if !a.Snapshot {
		for text, f := range la.held {
			next[text] = f
		}
	}
	for _, text := range a.Remove {
		f, err := match.Parse(text)
		if err != nil {
			return nil, fmt.Errorf("removed filter %q: %w", text, err)
		}
		if _, ok := next[f.String()]; !ok {
			return nil, fmt.Errorf("removes %q, which it never advertised", text)
		}
		delete(next, f.String())
	}
	for _, text := range a.Add {
		f, err := match.Parse(text)
		if err != nil {
			return nil, fmt.Errorf("filter %q: %w", text, err)
		}
		if _, ok := next[f.String()]; ok {
			return nil, fmt.Errorf("advertises %q twice", text)
		}
		next[f.String()] = f
	}
	change := make(map[string]*heldFilter)
	for text, f := range next {
		if _, ok := la.held[text]; !ok {
			change[text] = &heldFilter{f: f, n: 1}
		}
	}
	for text, f := range la.held {
		if _, ok := next[text]; !ok {
			change[text] = &heldFilter{f: f, n: -1}
		}
	}
	return change, nil
}

// sendOverlapping sends link l, in one Routes message, the forwarded
// filters that overlap one of the advertisements just added and were not
// sent yet.
func (m *Mesh) sendOverlapping(l *link, la *linkAdverts, added []match.Filter, out *Output) {
	change := make(map[string]*heldFilter)
	for text, ff := range la.fwd {
		if !ff.sent && overlapsAny(ff.f, added) {
			ff.sent = true
			change[text] = &heldFilter{f: ff.f, n: ff.n}
		}
	}
	m.sendRoutes(l, change, out)
}

// advertRoutes turns the table's net change of the filters it forwards to
// link l into the change of what l is sent: only filters that overlap an
// advertisement from l. With advertisements off it returns change.
func (m *Mesh) advertRoutes(l *link, change map[string]*heldFilter) map[string]*heldFilter {
	if m.adv == nil {
		return change
	}
	la := m.adv.links[l.id]
	sent := make(map[string]*heldFilter)
	for text, h := range change {
		before := 0
		if ff := la.fwd[text]; ff != nil {
			before = ff.sentCount()
		}
		if d := la.bump(h.f, h.n).sentCount() - before; d != 0 {
			sent[text] = &heldFilter{f: h.f, n: d}
		}
	}
	return sent
}

// forwardedTo returns the filters sent to link l, in canonical order: the
// table's forwarding set, restricted with advertisements on to the
// filters that overlapped the peer's advertisements when they entered the
// set or since.
func (m *Mesh) forwardedTo(l *link) []string {
	all := texts(m.table.Forwarded(l.slot))
	if m.adv == nil {
		return all
	}
	la := m.adv.links[l.id]
	var out []string
	for _, text := range all {
		if ff := la.fwd[text]; ff != nil && ff.sent {
			out = append(out, text)
		}
	}
	return out
}

// forwardedCount is len(m.forwardedTo(l)) without building the list.
func (m *Mesh) forwardedCount(l *link) int {
	if m.adv == nil {
		return m.table.ForwardedLen(l.slot)
	}
	n := 0
	for _, ff := range m.adv.links[l.id].fwd {
		if ff.sent {
			n++
		}
	}
	return n
}

func overlapsAny(f match.Filter, ads []match.Filter) bool {
	for _, a := range ads {
		if match.Overlaps(f, a) {
			return true
		}
	}
	return false
}
