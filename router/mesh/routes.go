package mesh

import (
	"fmt"
	"iter"
	"maps"
	"slices"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
)

// Receive handles a message that arrived on link id: Routes (installed,
// propagated, acknowledged once downstream acknowledged), RoutesAck, or
// Reach (which may close a cycle, see breakCycles). Messages on a link
// that has gone are ignored. A malformed or out-of-order message returns
// an error and changes no state: the caller closes the link and calls
// LinkDown.
func (m *Mesh) Receive(id Link, msg wire.Message) (Output, error) {
	var out Output
	l := m.links[id]
	if l == nil {
		return out, nil
	}
	switch msg := msg.(type) {
	case *wire.Routes:
		return out, m.receiveRoutes(l, msg, &out)
	case *wire.Adverts:
		return out, m.receiveAdverts(l, msg, &out) // advert_routes.go
	case *wire.RoutesAck:
		if msg.Gen != uint64(l.id) {
			return out, nil // for an earlier session of this link
		}
		if msg.Seq > l.sentSeq {
			return out, fmt.Errorf("routes ack from %s: seq %d never sent (last %d)", l.peer, msg.Seq, l.sentSeq)
		}
		l.ackedSeq = max(l.ackedSeq, msg.Seq)
		m.acked(l, &out)
		m.pump(l, &out) // snapstream.go: the window moved
		return out, nil
	case *wire.Reach:
		if err := m.receiveReach(l, msg); err != nil {
			return out, err
		}
		m.breakCycles(&out)
		m.propagateReach(&out)
		return out, nil
	}
	return out, fmt.Errorf("link to %s: unexpected %s message", l.peer, msg.Type())
}

// receiveRoutes validates a Routes message completely, then applies it:
// additions first, so nothing the neighbours hold is uncovered in between.
func (m *Mesh) receiveRoutes(l *link, r *wire.Routes, out *Output) error {
	if err := l.checkSeq("routes", r.Gen, r.Seq); err != nil {
		return err
	}
	if err := m.checkFirstAdverts(l); err != nil {
		return err
	}
	add, remove, err := m.change(l, r)
	if err != nil {
		return fmt.Errorf("routes from %s seq %d: %w", l.peer, r.Seq, err)
	}
	l.peerGen, l.recvSeq = r.Gen, r.Seq
	d := delta{}
	for _, f := range add {
		m.subscribe(d, l.slot, f)
		l.received++
	}
	for _, f := range remove {
		m.unsubscribe(d, l.slot, f)
		l.received--
	}
	out.Held = &HeldChange{Add: add, Remove: remove}
	m.flush(d, out)
	if r.Snapshot || len(r.Add) > 0 || len(r.Remove) == 0 {
		m.barrier(out, l.id)
	}
	m.wait(pending{link: l.id, gen: r.Gen, seq: r.Seq}, l.id, out)
	return nil
}

// change parses r into the filters to add and to remove against what l
// holds, without changing anything. An incremental message costs its own
// size; a snapshot is the difference between what l holds and r.Add.
func (m *Mesh) change(l *link, r *wire.Routes) (add, remove []match.Filter, err error) {
	if r.Snapshot {
		return m.snapshotChange(l, r)
	}
	net := make(map[string]*heldFilter) // by canonical text: net change
	for _, text := range r.Remove {
		h, err := parseInto(net, text)
		if err != nil {
			return nil, nil, fmt.Errorf("removed %w", err)
		}
		if m.table.Count(l.slot, h.f)+h.n <= 0 {
			return nil, nil, fmt.Errorf("removes %q, which it never sent", text)
		}
		h.n--
	}
	for _, text := range r.Add {
		h, err := parseInto(net, text)
		if err != nil {
			return nil, nil, err
		}
		h.n++
	}
	add, remove = expand(net)
	return add, remove, nil
}

// snapshotChange is change for a snapshot: the difference between what l
// holds and r.Add.
func (m *Mesh) snapshotChange(l *link, r *wire.Routes) (add, remove []match.Filter, err error) {
	net := make(map[string]*heldFilter)
	for _, h := range m.table.HeldBy(l.slot) {
		net[h.Text] = &heldFilter{h.Filter, -h.N}
	}
	for _, text := range r.Add {
		h, err := parseInto(net, text)
		if err != nil {
			return nil, nil, err
		}
		h.n++
	}
	add, remove = expand(net)
	return add, remove, nil
}

// parseInto parses text and returns its entry in net, created at zero.
// The filter is compacted (match.Compact): a link may hold it for long.
func parseInto(net map[string]*heldFilter, text string) (*heldFilter, error) {
	f, err := match.ParseCompact(text)
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w", text, err)
	}
	key := f.String()
	h := net[key]
	if h == nil {
		h = &heldFilter{f: f}
		net[key] = h
	}
	return h, nil
}

// expand lists each net change as filters to add and to remove, in
// canonical order.
func expand(net map[string]*heldFilter) (add, remove []match.Filter) {
	for _, text := range sortedKeys(net) {
		h := net[text]
		for range max(h.n, 0) {
			add = append(add, h.f)
		}
		for range max(-h.n, 0) {
			remove = append(remove, h.f)
		}
	}
	return add, remove
}

// Subscribe installs a local client's subscription ref to f. The output's
// Ready names it once every link it was propagated on (directly or behind
// a covering filter still being installed) has acknowledged.
//
// The Mesh keeps no map of the clients' subscriptions: the caller does
// (the router's engine holds every subscription's filter once), so it
// never subscribes a ref the client already uses, and it hands
// Unsubscribe and DropClient the filters it subscribed.
func (m *Mesh) Subscribe(c Client, ref uint64, f match.Filter) (Output, error) {
	if m.placing[clientRef{c, ref}] != nil {
		return Output{}, fmt.Errorf("client %d: subscription %d is being placed", c, ref)
	}
	var out Output
	d := delta{}
	m.subscribe(d, m.clientIface(c), f)
	m.flush(d, &out)
	m.barrier(&out, 0)
	m.wait(pending{client: c, ref: ref}, 0, &out)
	return out, nil
}

// Unsubscribe removes a local client's subscription ref, whose filter is
// f (what the caller subscribed). A filter the client's interface does
// not hold is an error and changes nothing. A subscription not Ready yet
// never will be: its Ready is forgotten (the ref may be used again).
func (m *Mesh) Unsubscribe(c Client, ref uint64, f match.Filter) (Output, error) {
	var out Output
	if m.abortPlacing(c, ref) {
		m.cancelReady(c, readyKey{ref: ref})
		return out, nil // never reached the table
	}
	us, err := m.table.Unsubscribe(m.clientIface(c), f)
	if err != nil {
		return out, fmt.Errorf("client %d subscription %d: %w", c, ref, err)
	}
	m.cancelReady(c, readyKey{ref: ref})
	d := delta{}
	d.apply(us)
	m.flush(d, &out)
	return out, nil
}

// DropClient removes every subscription of a client that went away, as
// one input: subs yields each of them (ref and filter, as subscribed), and
// each link gets the net change once (in parts when large, see
// sendParts), not one message per subscription.
func (m *Mesh) DropClient(c Client, subs iter.Seq2[uint64, match.Filter]) Output {
	var out Output
	d := delta{}
	from := m.clientIface(c)
	for ref, f := range subs {
		m.cancelReady(c, readyKey{ref: ref})
		if m.abortPlacing(c, ref) {
			continue // never reached the table
		}
		m.unsubscribe(d, from, f)
	}
	m.flush(d, &out)
	m.dropAdverts(c, &out)
	m.dropWaits(c)
	return out
}

// delta accumulates, per link slot, the net change of forwarded filters
// over one input, so each neighbour gets at most one Routes message.
type delta map[poset.Iface]map[string]*heldFilter

func (d delta) apply(us []poset.Update) {
	for _, u := range us {
		at := d[u.To]
		if at == nil {
			at = make(map[string]*heldFilter)
			d[u.To] = at
		}
		for _, f := range u.Remove {
			bump(at, f, -1)
		}
		for _, f := range u.Add {
			bump(at, f, 1)
		}
	}
}

func bump(at map[string]*heldFilter, f match.Filter, n int) {
	text := f.String()
	h := at[text]
	if h == nil {
		h = &heldFilter{f: f}
		at[text] = h
	}
	h.n += n
}

// subscribe and unsubscribe apply one table operation. The table cannot
// refuse a parsed filter or a subscription it holds, so an error here is a
// broken invariant.
func (m *Mesh) subscribe(d delta, from poset.Iface, f match.Filter) {
	us, err := m.table.Subscribe(from, f)
	if err != nil {
		panic(fmt.Sprintf("mesh: routing table refused %s: %v", f, err))
	}
	d.apply(us)
}

func (m *Mesh) unsubscribe(d delta, from poset.Iface, f match.Filter) {
	us, err := m.table.Unsubscribe(from, f)
	if err != nil {
		panic(fmt.Sprintf("mesh: routing table lost %s: %v", f, err))
	}
	d.apply(us)
}

// flush sends each link with a net change one Routes message. A slot whose
// link has just gone (LinkDown unsubscribing what it held) is skipped.
// With advertisements on, a link is sent only the filters that overlap
// its advertisements (advertRoutes).
func (m *Mesh) flush(d delta, out *Output) {
	for _, slot := range sortedKeys(d) {
		if l := m.bySlot[slot]; l != nil {
			m.sendRoutes(l, m.advertRoutes(l, d[slot]), out)
		}
	}
}

// sendRoutes sends l the net change, if any: one Routes message, or
// several of at most Config.SnapshotPart bytes of filter text each when it
// is larger (sendParts).
func (m *Mesh) sendRoutes(l *link, change map[string]*heldFilter, out *Output) {
	var r wire.Routes
	for _, text := range sortedKeys(change) {
		h := change[text]
		rm := -h.n
		if rm > 0 && l.stream != nil {
			rm -= l.stream.withdraw(h.f, rm) // never sent: nothing to remove
		}
		for range rm {
			r.Remove = append(r.Remove, text)
		}
		for i := 0; i < h.n; i++ {
			r.Add = append(r.Add, text)
		}
	}
	m.sendParts(l, r.Add, r.Remove, out)
}

// sendParts sends l the additions add and the removals remove in Routes
// messages of at most Config.SnapshotPart bytes of filter text each (a
// single larger filter goes alone), every addition before any removal:
// the receiver applies a message's additions before its removals, so in
// parts too nothing it forwards is uncovered in between. Why parts: a
// change can be as large as the table (a client with 10^6 subscriptions
// leaving, a link dropping), and the receiver reads frames of a bounded
// size.
func (m *Mesh) sendParts(l *link, add, remove []string, out *Output) {
	for len(add)+len(remove) > 0 {
		r := &wire.Routes{Gen: uint64(l.id)}
		size := 0
		take := func(list *[]string, into *[]string) {
			for len(*list) > 0 && (size == 0 || size+len((*list)[0]) <= m.snapPart) {
				*into = append(*into, (*list)[0])
				size += len((*list)[0]) + 3 // the text and its length
				*list = (*list)[1:]
			}
		}
		take(&add, &r.Add)
		if len(add) == 0 {
			take(&remove, &r.Remove)
		}
		l.sentSeq++
		r.Seq = l.sentSeq
		out.send(l.id, r)
	}
}

// barrier sends an empty Routes on every link except from that got nothing
// from this input. Its acknowledgement, like any, comes back only once
// everything sent beyond is installed, so an input whose filters covering
// pruned still learns when the routers behind each link have settled
// (a link that just came up may not have installed its snapshot yet).
// Receivers forward barriers likewise. Removals need none: nobody waits
// for them.
func (m *Mesh) barrier(out *Output, from Link) {
	sent := map[Link]bool{}
	for _, sd := range out.Sends {
		switch sd.Msg.(type) {
		case *wire.Routes, *wire.Adverts:
			sent[sd.Link] = true
		}
	}
	for _, l := range m.sortedLinks() {
		if l.id != from && !sent[l.id] {
			l.sentSeq++
			out.send(l.id, &wire.Routes{Gen: uint64(l.id), Seq: l.sentSeq})
		}
	}
}

func texts(fs []match.Filter) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

func sortedKeys[K ~string | ~uint32 | ~uint64, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}
