package mesh

// LinkRoutes describes one link for /debug/routes: the peer, the routers
// reachable through it, and the filters forwarded to and received from it
// (received ones repeated by multiplicity), in canonical order.
type LinkRoutes struct {
	Link Link   `json:"link"`
	Peer string `json:"peer"`
	// Epoch is the link's epoch, which both ends hold: of the links
	// closing a cycle, the one with the largest epoch is closed.
	Epoch     uint64   `json:"epoch"`
	Reach     []string `json:"reach"`
	Forwarded []string `json:"forwarded"`
	Received  []string `json:"received"`
	// ForwardedCount and ReceivedCount are the lengths of Forwarded and
	// Received; RouteCounts sets them and leaves the lists empty.
	ForwardedCount int `json:"forwarded_count"`
	ReceivedCount  int `json:"received_count"`
	// Unacked counts Routes messages sent on the link and not yet
	// acknowledged.
	Unacked uint64 `json:"unacked"`
	// AdvertsForwarded and AdvertsReceived are the advertisements sent to
	// and received from the peer (Config.Advertise; empty otherwise).
	AdvertsForwarded []string `json:"adverts_forwarded,omitempty"`
	AdvertsReceived  []string `json:"adverts_received,omitempty"`
}

// Routes describes every link up, in the order they came up.
func (m *Mesh) Routes() []LinkRoutes {
	var out []LinkRoutes
	for _, l := range m.sortedLinks() {
		var recv []string
		for _, h := range m.table.HeldBy(l.slot) {
			for range h.N {
				recv = append(recv, h.Text)
			}
		}
		fwd := m.forwardedTo(l)
		out = append(out, LinkRoutes{
			Link: l.id, Peer: l.peer, Epoch: l.epoch, Reach: append([]string(nil), l.reach...),
			Forwarded: fwd, Received: recv, ForwardedCount: len(fwd), ReceivedCount: len(recv),
			Unacked: l.sentSeq - l.ackedSeq,
		})
		m.addAdverts(&out[len(out)-1], l)
	}
	return out
}

// RouteCounts is Routes with the filter lists left out (their lengths
// only; advertisements are listed, they are few): what a link carrying 10^6 filters can be watched with, where
// Routes builds tens of megabytes.
func (m *Mesh) RouteCounts() []LinkRoutes {
	var out []LinkRoutes
	for _, l := range m.sortedLinks() {
		out = append(out, LinkRoutes{
			Link: l.id, Peer: l.peer, Epoch: l.epoch, Reach: append([]string(nil), l.reach...),
			ForwardedCount: m.forwardedCount(l), ReceivedCount: l.received,
			Unacked: l.sentSeq - l.ackedSeq,
		})
		m.addAdverts(&out[len(out)-1], l)
	}
	return out
}

// addAdverts fills r's advertisement lists for link l (with
// advertisements on).
func (m *Mesh) addAdverts(r *LinkRoutes, l *link) {
	if m.adv == nil {
		return
	}
	la := m.adv.links[l.id]
	r.AdvertsForwarded = sortedKeys(la.sent)
	r.AdvertsReceived = sortedKeys(la.held)
}
