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
	id          Link
	slot        poset.Iface
	peer        string
	version     uint64   // the link protocol version both ends speak
	incarn      uint64   // the peer's incarnation, from its hello
	epoch       uint64   // the link's epoch, the same at both ends (epoch.go)
	reach       []string // names reachable through the peer without this link
	reachEp     []uint64 // per reach name, the newest link's epoch on the peer's path to it
	sentReach   []string // what we last told the peer it reaches through us
	sentReachEp []uint64 // and the epochs we told it
	sentSeq     uint64   // last Routes seq sent (our session gen is id)
	ackedSeq    uint64   // highest seq the peer acknowledged
	peerGen     uint64   // the peer's session gen, from its first Routes
	recvSeq     uint64   // last Routes seq received
	// received counts the filters the peer sent that the link holds; the
	// routing table holds them (its subscriptions from slot: HeldBy,
	// Count), so the link keeps no copy of its own.
	received int
	stream   *snapStream // the snapshot still being sent (snapstream.go)
}

// heldFilter is a filter received from the peer, with its multiplicity.
type heldFilter struct {
	f match.Filter
	n int
}

// Hello returns the LinkHello a dialling router sends on a new link:
// this router's name, incarnation and link clock, and every router
// reachable through it over the links up now, with the epoch of the newest
// link on the way to each.
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
	names, epochs := m.reachExcept(except)
	return &wire.LinkHello{MinVersion: wire.Version, MaxVersion: m.version, Name: m.name, Reach: names, ReachEpochs: epochs,
		Incarnation: m.incarn, Advertise: m.adv != nil, Clock: m.clock}
}

// Accept is LinkUp for the accepting side of a link, whose peer dialled
// and sent h (with no epoch: a dialler's hello carries none). It gives the
// link its epoch, newer than every link this router or the peer knows of,
// and returns with the link the hello to answer with, which carries that
// epoch so that both ends agree on it. Since the new link is the newest,
// any cycle it would close refuses it.
func (m *Mesh) Accept(h *wire.LinkHello) (Link, *wire.LinkHello, Output, error) {
	if h.Epoch != 0 {
		return 0, nil, Output{}, fmt.Errorf("link to %s refused: a dialling router's hello carries no link epoch (got %#x)", h.Name, h.Epoch)
	}
	answer := m.HelloTo(h.Name)
	clock := max(m.clock, h.Clock)
	for _, e := range h.ReachEpochs {
		clock = max(clock, e)
	}
	answer.Epoch = m.nextEpoch(clock)
	id, out, err := m.linkUp(h, answer.Epoch)
	if err != nil {
		return 0, nil, Output{}, err
	}
	return id, answer, out, nil
}

// LinkUp accepts, on the dialling side, a link whose peer answered with h
// (the accepting router's hello, from Accept, with the link's epoch). It
// refuses, with an error and no state change, a version mismatch, a peer
// that disagrees on advertisements (h.Advertise against
// Config.Advertise), a link to itself or to a router already linked with
// the same incarnation, a link beyond MaxLinks, and a link that would be
// the newest of a cycle it closes. If another link of this router is the
// newest of such a cycle (this router accepted it after the peer gave this
// one its epoch), that link is closed instead (out.Close): its other end
// sees the same epochs and closes it too. A hello from a linked router with
// another incarnation means that router restarted: the stale link is
// dropped (as by LinkDown, and reported in out.Close) and the new one
// accepted. On success the output holds the snapshot of what this router
// forwards to the peer, and Reach updates for the other links. A hello
// without an epoch (a router from before epochs, or a test linking two
// Meshes by their Hello) gets one here as Accept would give it.
func (m *Mesh) LinkUp(h *wire.LinkHello) (Link, Output, error) {
	epoch := h.Epoch
	switch {
	case epoch == 0:
		clock := max(m.clock, h.Clock)
		for _, e := range h.ReachEpochs {
			clock = max(clock, e)
		}
		epoch = m.nextEpoch(clock)
	case epoch <= h.Clock:
		return 0, Output{}, fmt.Errorf("link to %s refused: link epoch %#x is not above its clock %#x", h.Name, epoch, h.Clock)
	}
	return m.linkUp(h, epoch)
}

// linkUp is LinkUp and Accept once the link's epoch is known.
func (m *Mesh) linkUp(h *wire.LinkHello, epoch uint64) (Link, Output, error) {
	version, err := wire.NegotiateLink(h, m.version)
	if err != nil {
		return 0, Output{}, fmt.Errorf("link to %s refused: %w", h.Name, err)
	}
	if err := m.checkAdvertMode(h); err != nil { // advert.go
		return 0, Output{}, fmt.Errorf("link to %s refused: %w", h.Name, err)
	}
	stale := m.staleLink(h)
	if err := m.checkPeer(h, stale); err != nil {
		return 0, Output{}, fmt.Errorf("link to %s refused: %w", h.Name, err)
	}
	l := &link{peer: h.Name, version: version, incarn: h.Incarnation, epoch: epoch, reach: slices.Clone(h.Reach), reachEp: epochsFor(h.ReachEpochs, len(h.Reach))}
	others := []*link{}
	for _, o := range m.sortedLinks() {
		if o.id != stale {
			others = append(others, o)
		}
	}
	doom := m.newestOfCycles(append(others, l))
	for _, d := range doom {
		if d.l == l {
			return 0, Output{}, fmt.Errorf("link to %s refused: cycle: %s", h.Name, d.why)
		}
	}
	if _, ok := m.freeSlot(); !ok && stale == 0 && len(doom) == 0 {
		return 0, Output{}, fmt.Errorf("link to %s refused: %d links up already (the maximum)", h.Name, m.maxLinks)
	}
	m.see(h.Clock, epoch)
	m.see(l.reachEp...)
	var out Output
	if stale != 0 {
		out.Close = append(out.Close, Close{Link: stale, Reason: fmt.Sprintf("%s restarted (incarnation %016x, was %016x): the link is stale", h.Name, h.Incarnation, m.links[stale].incarn)})
		m.drop(stale, &out)
	}
	m.closeDoomed(doom, &out)
	slot, _ := m.freeSlot()
	fwd, err := m.table.AddNeighbour(slot)
	if err != nil {
		panic(fmt.Sprintf("mesh: routing table refused free slot %d: %v", slot, err))
	}
	m.nextLink++
	l.id, l.slot = m.nextLink, slot
	m.links[l.id] = l
	m.bySlot[slot] = l
	add := m.advertSnapshot(l, fwd.Add, &out) // advert.go: the adverts snapshot goes first
	m.startSnapshot(l, add, &out)             // snapstream.go: in parts
	m.propagateReach(&out)
	return l.id, out, nil
}

// closeDoomed drops the links that are the newest of a cycle, reporting
// each in out.Close.
func (m *Mesh) closeDoomed(doom []doomed, out *Output) {
	for _, d := range doom {
		if m.links[d.l.id] != d.l {
			continue // dropped already
		}
		out.Close = append(out.Close, Close{Link: d.l.id, Reason: "cycle: " + d.why + "; closing it"})
		m.drop(d.l.id, out)
	}
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
	for _, h := range m.table.HeldBy(l.slot) {
		for range h.N {
			m.unsubscribe(d, l.slot, h.Filter)
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

// checkPeer refuses a hello whose reachable set does not name its sender,
// and a second link to a router linked already (other than except, a stale
// link the new one replaces). Cycles are newestOfCycles' to judge.
func (m *Mesh) checkPeer(h *wire.LinkHello, except Link) error {
	if !slices.Contains(h.Reach, h.Name) {
		return fmt.Errorf("reachable set of %s does not name it", h.Name)
	}
	if len(h.ReachEpochs) != 0 && len(h.ReachEpochs) != len(h.Reach) {
		return fmt.Errorf("%d reach epochs for %d names", len(h.ReachEpochs), len(h.Reach))
	}
	if err := checkEpochs("hello", append([]uint64{h.Clock, h.Epoch}, h.ReachEpochs...)...); err != nil {
		return err
	}
	for _, o := range m.links {
		if o.id != except && o.peer == h.Name {
			return fmt.Errorf("already linked to %s", h.Name)
		}
	}
	return nil
}

// receiveReach replaces what a link reaches, with the epochs of the paths.
func (m *Mesh) receiveReach(l *link, r *wire.Reach) error {
	if !slices.Contains(r.Names, l.peer) {
		return fmt.Errorf("reach from %s does not name it", l.peer)
	}
	if len(r.Epochs) != 0 && len(r.Epochs) != len(r.Names) {
		return fmt.Errorf("reach from %s: %d epochs for %d names", l.peer, len(r.Epochs), len(r.Names))
	}
	if err := checkEpochs("reach from "+l.peer, r.Epochs...); err != nil {
		return err
	}
	l.reach = slices.Clone(r.Names)
	l.reachEp = epochsFor(r.Epochs, len(r.Names))
	m.see(l.reachEp...)
	return nil
}

// breakCycles closes every link that is the newest of a cycle now seen
// (after l's reachable set changed: two links raced past the checks of
// Accept and LinkUp). A router on such a cycle whose links are all older
// than its newest link closes nothing.
func (m *Mesh) breakCycles(out *Output) {
	m.closeDoomed(m.newestOfCycles(m.sortedLinks()), out)
}

// reachExcept is this router's name and every name reachable over links
// other than except, sorted, with for each the epoch of the newest link
// on the path to it (0 for this router; where a name is reachable over
// several links, the least).
func (m *Mesh) reachExcept(except Link) ([]string, []uint64) {
	set := map[string]uint64{m.name: 0}
	for _, l := range m.links {
		if l.id == except {
			continue
		}
		for i, n := range l.reach {
			e := l.pathEpoch(i)
			if old, ok := set[n]; !ok || e < old {
				set[n] = e
			}
		}
	}
	names := sortedKeys(set)
	epochs := make([]uint64, len(names))
	for i, n := range names {
		epochs[i] = set[n]
	}
	return names, epochs
}

// propagateReach sends Reach on every link whose reachable set changed.
func (m *Mesh) propagateReach(out *Output) {
	for _, l := range m.sortedLinks() {
		names, epochs := m.reachExcept(l.id)
		if !slices.Equal(names, l.sentReach) || !slices.Equal(epochs, l.sentReachEp) {
			l.sentReach, l.sentReachEp = names, epochs
			out.send(l.id, &wire.Reach{Names: names, Epochs: epochs})
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

// LinkVersion returns the link protocol version a link's ends agreed on
// (the highest both announced), 0 when the link is not up.
func (m *Mesh) LinkVersion(id Link) uint64 {
	if l, ok := m.links[id]; ok {
		return l.version
	}
	return 0
}
