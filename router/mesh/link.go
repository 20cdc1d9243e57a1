package mesh

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
)

// link is one up link session.
type link struct {
	id        Link
	slot      poset.Iface
	peer      string
	incarn    uint64   // the peer's incarnation, from its hello
	reach     []string // names reachable through the peer without this link
	sentReach []string // what we last told the peer it reaches through us
	sentSeq   uint64   // last Routes seq sent (our session gen is id)
	ackedSeq  uint64   // highest seq the peer acknowledged
	peerGen   uint64   // the peer's session gen, from its first Routes
	recvSeq   uint64   // last Routes seq received
	held      map[string]*heldFilter
}

// heldFilter is a filter received from the peer, with its multiplicity.
type heldFilter struct {
	f match.Filter
	n int
}

// pair is the link's pair of router names, smaller first: the order that
// decides which link of a cycle closes.
func (l *link) pair(me string) [2]string {
	if me < l.peer {
		return [2]string{me, l.peer}
	}
	return [2]string{l.peer, me}
}

// Hello returns the LinkHello to send on a new link: this router's name
// and incarnation, and every router reachable through it over the links up
// now.
func (m *Mesh) Hello() *wire.LinkHello { return m.HelloTo("") }

// HelloTo is Hello for a link to the router named peer: the reachable set
// leaves out any link up to peer already (a stale link to a previous run
// of peer, which LinkUp replaces, or a duplicate it refuses), so a
// restarted peer does not see itself in it and refuse a cycle.
func (m *Mesh) HelloTo(peer string) *wire.LinkHello {
	var except Link
	for _, l := range m.links {
		if l.peer == peer {
			except = l.id
		}
	}
	return &wire.LinkHello{MinVersion: wire.Version, MaxVersion: wire.Version, Name: m.name, Reach: m.reachExcept(except), Incarnation: m.incarn, Advertise: m.adv != nil}
}

// LinkUp accepts a link whose peer sent h. It refuses, with an error and
// no state change, a version mismatch, a peer that disagrees on
// advertisements (h.Advertise against Config.Advertise), a link to itself or to a router
// already linked with the same incarnation, a link that would close a
// cycle, and a link beyond MaxLinks. A hello from a linked router with
// another incarnation means that router restarted: the stale link is
// dropped (as by LinkDown, and reported in out.Close) and the new one
// accepted. On success the output holds the snapshot of what this router
// forwards to the peer, and Reach updates for the other links.
func (m *Mesh) LinkUp(h *wire.LinkHello) (Link, Output, error) {
	if _, err := wire.Negotiate(&wire.Hello{MinVersion: h.MinVersion, MaxVersion: h.MaxVersion}, wire.Version, wire.Version); err != nil {
		return 0, Output{}, fmt.Errorf("link to %s refused: %w", h.Name, err)
	}
	if err := m.checkAdvertMode(h); err != nil { // advert.go
		return 0, Output{}, fmt.Errorf("link to %s refused: %w", h.Name, err)
	}
	stale := m.staleLink(h)
	if err := m.checkReach(h.Name, h.Reach, stale); err != nil {
		return 0, Output{}, fmt.Errorf("link to %s refused: %w", h.Name, err)
	}
	if _, ok := m.freeSlot(); !ok && stale == 0 {
		return 0, Output{}, fmt.Errorf("link to %s refused: %d links up already (the maximum)", h.Name, m.maxLinks)
	}
	var out Output
	if stale != 0 {
		out.Close = append(out.Close, Close{Link: stale, Reason: fmt.Sprintf("%s restarted (incarnation %016x, was %016x): the link is stale", h.Name, h.Incarnation, m.links[stale].incarn)})
		m.drop(stale, &out)
	}
	slot, _ := m.freeSlot()
	fwd, err := m.table.AddNeighbour(slot)
	if err != nil {
		panic(fmt.Sprintf("mesh: routing table refused free slot %d: %v", slot, err))
	}
	m.nextLink++
	l := &link{id: m.nextLink, slot: slot, peer: h.Name, incarn: h.Incarnation, reach: slices.Clone(h.Reach), held: make(map[string]*heldFilter)}
	m.links[l.id] = l
	m.bySlot[slot] = l
	add := m.advertSnapshot(l, fwd.Add, &out) // advert.go: the adverts snapshot goes first
	l.sentSeq++
	out.send(l.id, &wire.Routes{Gen: uint64(l.id), Seq: l.sentSeq, Snapshot: true, Add: texts(add)})
	m.propagateReach(&out)
	return l.id, out, nil
}

// staleLink returns the link to h's sender if it is up with another
// incarnation (that router restarted), else 0.
func (m *Mesh) staleLink(h *wire.LinkHello) Link {
	for _, l := range m.links {
		if l.peer == h.Name && l.incarn != h.Incarnation {
			return l.id
		}
	}
	return 0
}

// LinkDown drops a link: everything received from it is unsubscribed (the
// neighbours hear the difference), the other links' reachable sets shrink,
// and nothing waits for its acknowledgements any more. Unknown links are
// ignored.
func (m *Mesh) LinkDown(id Link) Output {
	var out Output
	m.drop(id, &out)
	return out
}

func (m *Mesh) drop(id Link, out *Output) {
	l := m.links[id]
	if l == nil {
		return
	}
	d := delta{}
	for _, text := range sortedKeys(l.held) {
		h := l.held[text]
		for range h.n {
			m.unsubscribe(d, l.slot, h.f)
		}
	}
	delete(m.links, id)
	delete(m.bySlot, l.slot)
	if err := m.table.RemoveNeighbour(l.slot); err != nil {
		panic(fmt.Sprintf("mesh: routing table lost neighbour slot %d: %v", l.slot, err))
	}
	m.flush(d, out)
	m.advertLinkGone(id, out)
	m.propagateReach(out)
	m.linkGone(id, out)
}

func (m *Mesh) freeSlot() (poset.Iface, bool) {
	for i := 1; i <= m.maxLinks; i++ {
		if m.bySlot[poset.Iface(i)] == nil {
			return poset.Iface(i), true
		}
	}
	return 0, false
}

// checkReach refuses a peer whose reachable set meets this router or what
// another link (other than except) reaches.
func (m *Mesh) checkReach(peer string, reach []string, except Link) error {
	if !slices.Contains(reach, peer) {
		return fmt.Errorf("reachable set of %s does not name it", peer)
	}
	if slices.Contains(reach, m.name) {
		return fmt.Errorf("cycle: %s reaches this router (%s) without this link", peer, m.name)
	}
	for _, o := range m.sortedLinks() {
		if o.id == except {
			continue
		}
		if o.peer == peer {
			return fmt.Errorf("already linked to %s", peer)
		}
		if n, ok := firstCommon(reach, o.reach); ok {
			return fmt.Errorf("cycle: %s is reachable through %s and through %s", n, peer, o.peer)
		}
	}
	return nil
}

// receiveReach replaces what a link reaches. If that closes a cycle (two
// links raced past LinkUp's check), the link with the largest pair of
// names among this one and the links it conflicts with is dropped and
// reported in out.Close.
func (m *Mesh) receiveReach(l *link, r *wire.Reach) error {
	if !slices.Contains(r.Names, l.peer) {
		return fmt.Errorf("reach from %s does not name it", l.peer)
	}
	l.reach = slices.Clone(r.Names)
	return nil
}

// breakCycles drops, while any cycle shows, the link with the largest pair
// of names among the links involved.
func (m *Mesh) breakCycles(l *link, out *Output) {
	worst, why := l, ""
	if slices.Contains(l.reach, m.name) {
		why = fmt.Sprintf("%s reaches this router (%s) without this link", l.peer, m.name)
	}
	for _, o := range m.sortedLinks() {
		if o == l {
			continue
		}
		if n, ok := firstCommon(l.reach, o.reach); ok {
			why = fmt.Sprintf("%s is reachable through %s and through %s", n, l.peer, o.peer)
			if cmpPair(o.pair(m.name), worst.pair(m.name)) > 0 {
				worst = o
			}
		}
	}
	if why == "" {
		return
	}
	out.Close = append(out.Close, Close{Link: worst.id, Reason: fmt.Sprintf("cycle: %s; closing the link %s-%s", why, worst.pair(m.name)[0], worst.pair(m.name)[1])})
	m.drop(worst.id, out)
}

// reachExcept is this router's name and every name reachable over links
// other than except, sorted.
func (m *Mesh) reachExcept(except Link) []string {
	set := []string{m.name}
	for _, l := range m.links {
		if l.id != except {
			set = append(set, l.reach...)
		}
	}
	slices.Sort(set)
	return slices.Compact(set)
}

// propagateReach sends Reach on every link whose reachable set changed.
func (m *Mesh) propagateReach(out *Output) {
	for _, l := range m.sortedLinks() {
		r := m.reachExcept(l.id)
		if !slices.Equal(r, l.sentReach) {
			l.sentReach = r
			out.send(l.id, &wire.Reach{Names: r})
		}
	}
}

func (m *Mesh) sortedLinks() []*link {
	ls := make([]*link, 0, len(m.links))
	for _, l := range m.links {
		ls = append(ls, l)
	}
	slices.SortFunc(ls, func(a, b *link) int { return cmp.Compare(a.id, b.id) })
	return ls
}

func cmpPair(a, b [2]string) int {
	if c := cmp.Compare(a[0], b[0]); c != 0 {
		return c
	}
	return cmp.Compare(a[1], b[1])
}

// firstCommon returns the smallest name in both sorted sets.
func firstCommon(a, b []string) (string, bool) {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			return a[i], true
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return "", false
}
