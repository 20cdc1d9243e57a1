package mesh

import (
	"fmt"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// adverts is the Mesh's advertisement state (Config.Advertise): what local
// publishers advertised, how many sources hold each advertisement, and
// per link what was received, what was forwarded, and which of the
// table's forwarded filters the peer is actually sent.
type adverts struct {
	clients map[Client]map[uint64]match.Filter
	// total counts, per canonical text, the sources of an advertisement:
	// one per client advertisement and one per link holding it.
	total map[string]*heldFilter
	links map[Link]*linkAdverts
}

// linkAdverts is one link's advertisement state.
type linkAdverts struct {
	held map[string]match.Filter // advertisements received from the peer
	sent map[string]bool         // advertisements forwarded to the peer
	// fwd mirrors the table's forwarding set toward the peer; only the
	// filters overlapping an advertisement in held are sent.
	fwd map[string]*fwdFilter
}

// fwdFilter is a filter the table forwards toward a link, and whether it
// was sent: it overlapped one of the link's advertisements when it entered
// the forwarding set or since (a withdrawal does not take it back).
type fwdFilter struct {
	f    match.Filter
	n    int
	sent bool
}

func newAdverts() *adverts {
	return &adverts{
		clients: make(map[Client]map[uint64]match.Filter),
		total:   make(map[string]*heldFilter),
		links:   make(map[Link]*linkAdverts),
	}
}

// Advertising reports whether the Mesh runs advertisements
// (Config.Advertise).
func (m *Mesh) Advertising() bool { return m.adv != nil }

// Advertise records local client c's advertisement ref of f: the events
// it publishes will match f. The advertisement floods to every link; the
// output's Ready (with Advert set) names it once every link has
// acknowledged, that is once every subscription overlapping f anywhere in
// the component has been installed at this router. A ref the client
// already uses, or advertisements off, is an error.
func (m *Mesh) Advertise(c Client, ref uint64, f match.Filter) (Output, error) {
	var out Output
	if m.adv == nil {
		return out, fmt.Errorf("client %d: advertisements are off on router %s", c, m.name)
	}
	ads := m.adv.clients[c]
	if _, dup := ads[ref]; dup {
		return out, fmt.Errorf("client %d: advertisement %d exists", c, ref)
	}
	if ads == nil {
		ads = make(map[uint64]match.Filter)
		m.adv.clients[c] = ads
	}
	ads[ref] = f
	m.floodAdverts(one(f, 1), &out)
	m.barrier(&out, 0)
	m.wait(pending{client: c, ref: ref, advert: true}, 0, &out)
	return out, nil
}

// Unadvertise withdraws client c's advertisement ref: links where no
// other source holds it hear the removal (subscriptions already forwarded
// because of it stay; see the package doc). An unknown ref is an error and
// changes nothing. An Advertise not Ready yet never will be.
func (m *Mesh) Unadvertise(c Client, ref uint64) (Output, error) {
	var out Output
	if m.adv == nil {
		return out, fmt.Errorf("client %d: advertisements are off on router %s", c, m.name)
	}
	f, ok := m.adv.clients[c][ref]
	if !ok {
		return out, fmt.Errorf("client %d: no advertisement %d", c, ref)
	}
	delete(m.adv.clients[c], ref)
	if len(m.adv.clients[c]) == 0 {
		delete(m.adv.clients, c)
	}
	m.cancelReady(c, readyKey{ref: ref, advert: true})
	m.floodAdverts(one(f, -1), &out)
	return out, nil
}

// checkAdvertMode refuses a peer whose hello says it runs advertisements
// while this router does not, or the reverse: both ends of a link must
// agree, or subscriptions would stop short of publishers (a router
// without them sends no advertisement) or ignore them.
func (m *Mesh) checkAdvertMode(h *wire.LinkHello) error {
	switch on := m.adv != nil; {
	case h.Advertise && !on:
		return fmt.Errorf("%s runs advertisements (--advertise) and this router (%s) does not; both ends of a link must agree", h.Name, m.name)
	case !h.Advertise && on:
		return fmt.Errorf("this router (%s) runs advertisements (--advertise) and %s does not; both ends of a link must agree", m.name, h.Name)
	}
	return nil
}

// Conforms reports whether local client c may publish e: always with
// advertisements off, else when e matches one of c's advertisements. A
// router refuses a non-conforming event, since subscriptions reach it
// only where advertisements say they must.
func (m *Mesh) Conforms(c Client, e match.Event) bool {
	if m.adv == nil {
		return true
	}
	for _, f := range m.adv.clients[c] {
		if f.Matches(e) {
			return true
		}
	}
	return false
}

// dropAdverts withdraws every advertisement of a client that went away.
func (m *Mesh) dropAdverts(c Client, out *Output) {
	if m.adv == nil {
		return
	}
	for _, ref := range sortedKeys(m.adv.clients[c]) {
		o, _ := m.Unadvertise(c, ref) // refs come from the map: cannot fail
		out.Sends = append(out.Sends, o.Sends...)
	}
}

// floodAdverts applies the net change of each advertisement's number of
// sources (a client, or a link whose held set the caller has already
// changed) and sends each link the resulting change of what it should
// hold: every advertisement held by some source other than the link itself
// (so never back to where it came from alone). One Adverts message per
// link.
func (m *Mesh) floodAdverts(change map[string]*heldFilter, out *Output) {
	for text, c := range change {
		h := m.adv.total[text]
		if h == nil {
			h = &heldFilter{f: c.f}
			m.adv.total[text] = h
		}
		if h.n += c.n; h.n == 0 {
			delete(m.adv.total, text)
		}
	}
	texts := sortedKeys(change)
	for _, l := range m.sortedLinks() {
		la := m.adv.links[l.id]
		var a wire.Adverts
		for _, text := range texts {
			switch want := m.advertHolders(text, la) > 0; {
			case want && !la.sent[text]:
				la.sent[text] = true
				a.Add = append(a.Add, text)
			case !want && la.sent[text]:
				delete(la.sent, text)
				a.Remove = append(a.Remove, text)
			}
		}
		if len(a.Add)+len(a.Remove) > 0 {
			l.sentSeq++
			a.Gen, a.Seq = uint64(l.id), l.sentSeq
			out.send(l.id, &a)
		}
	}
}

// one is the change of one source more (n = 1) or less (n = -1) for f.
func one(f match.Filter, n int) map[string]*heldFilter {
	return map[string]*heldFilter{f.String(): {f: f, n: n}}
}

// advertHolders counts the sources of an advertisement other than link la.
func (m *Mesh) advertHolders(text string, la *linkAdverts) int {
	n := 0
	if h := m.adv.total[text]; h != nil {
		n = h.n
	}
	if _, ok := la.held[text]; ok {
		n--
	}
	return n
}

// advertSnapshot starts a new link's advertisement state and sends the
// peer every advertisement held here (this must be the link's first
// message: it tells the peer both ends run advertisements). It returns
// what the link's Routes snapshot carries: the part of the table's
// forwarding set fwd that overlaps the peer's advertisements, none yet.
// With advertisements off it returns fwd.
func (m *Mesh) advertSnapshot(l *link, fwd []match.Filter, out *Output) []match.Filter {
	if m.adv == nil {
		return fwd
	}
	la := &linkAdverts{held: map[string]match.Filter{}, sent: map[string]bool{}, fwd: map[string]*fwdFilter{}}
	m.adv.links[l.id] = la
	for _, f := range fwd {
		la.bump(f, 1)
	}
	a := &wire.Adverts{Snapshot: true, Add: []string{}}
	for _, text := range sortedKeys(m.adv.total) {
		la.sent[text] = true
		a.Add = append(a.Add, text)
	}
	l.sentSeq++
	a.Gen, a.Seq = uint64(l.id), l.sentSeq
	out.send(l.id, a)
	return nil
}

// advertLinkGone forgets a dropped link's advertisement state and
// withdraws, from the other links, the advertisements only it held.
func (m *Mesh) advertLinkGone(id Link, out *Output) {
	if m.adv == nil {
		return
	}
	la := m.adv.links[id]
	delete(m.adv.links, id)
	if la == nil || len(la.held) == 0 {
		return
	}
	change := make(map[string]*heldFilter, len(la.held))
	for text, f := range la.held {
		change[text] = &heldFilter{f: f, n: -1}
	}
	m.floodAdverts(change, out)
}

// bump changes the count of a filter the table forwards toward the link
// and returns its entry (count zero: it just left). A filter entering is
// sent if it overlaps one of the link's advertisements.
func (la *linkAdverts) bump(f match.Filter, n int) *fwdFilter {
	text := f.String()
	ff := la.fwd[text]
	if ff == nil {
		ff = &fwdFilter{f: f, sent: la.overlaps(f)}
		la.fwd[text] = ff
	}
	if ff.n += n; ff.n == 0 {
		delete(la.fwd, text)
	}
	return ff
}

// overlaps reports whether f overlaps an advertisement from the peer.
func (la *linkAdverts) overlaps(f match.Filter) bool {
	for _, a := range la.held {
		if match.Overlaps(f, a) {
			return true
		}
	}
	return false
}

func (ff *fwdFilter) sentCount() int {
	if ff.sent {
		return ff.n
	}
	return 0
}
