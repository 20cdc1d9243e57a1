package durable

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// maxUpKey is the longest readable upstream key; longer ones are hashed
// (see upKey). Keys travel as subscription ids, which the wire limits to
// 255 bytes.
const maxUpKey = 255

// upKey names a link's subscription in this router's own filter set
// upstream: the same subscription id may be registered below two links (a
// subscriber that reconnected elsewhere), so the link is part of the name.
// A key that would be longer than a subscription id may be (it grows by
// a link name per hop) is replaced by a hash of it, "#" and 32 hex digits;
// a readable key always holds a '|', a hashed one never, so the two forms
// never collide. The key is only ever looked up, never parsed.
func upKey(link, sub string) string {
	if len(link)+1+len(sub) <= maxUpKey {
		return link + "|" + sub
	}
	h := sha256.Sum256([]byte(link + "|" + sub))
	return "#" + hex.EncodeToString(h[:16])
}

// upsFor returns the upstream neighbours a filter of link must be
// installed at: every one but the link itself. In a mesh a neighbour is
// upstream for the pubends on its side and downstream for the others; a
// filter from a link matters only for knowledge that flows toward it, so
// it is never sent back where it came from (it would come back again,
// one hop longer, for ever).
func (r *Router) upsFor(link string) []string {
	if !contains(r.ups, link) {
		return r.ups
	}
	return slices.DeleteFunc(slices.Clone(r.ups), func(u string) bool { return u == link })
}

// installUp installs a link's new filter at every upstream neighbour but
// the link, as one of this router's own filters, and waits for their
// acknowledgements; with no such neighbour it acknowledges at once. A
// resent install from below is sent up again (the earlier one or its
// acknowledgement may be lost); the install keeps waiting as it was, so
// acknowledgements of the earlier sends still count, and the one down
// will echo the newest install from below.
func (r *Router) installUp(link, sub string, m Msg) {
	key := upKey(link, sub)
	ups := r.upsFor(link)
	if len(ups) == 0 {
		if l := r.links[link]; l != nil {
			r.installAck(link, l, &upInstall{link: link, sub: sub, epoch: m.Epoch, ver: m.Version})
		}
		return
	}
	r.ver++
	pi, ok := r.pending[key]
	if !ok {
		pi = &upInstall{link: link, sub: sub, ups: ups, acks: map[string]Msg{}, first: r.ver}
		r.pending[key] = pi
	}
	if older(pi.epoch, pi.ver, m.Epoch, m.Version) {
		pi.epoch, pi.ver = m.Epoch, m.Version
	}
	for _, up := range ups {
		r.send(up, Msg{Kind: MsgInstall, Sub: key, Filter: m.Filter, Epoch: r.cfg.Incarnation, Version: r.ver, Origin: m.Origin, Born: m.Born})
	}
}

// uninstallUp removes a link's filter from every upstream neighbour it was
// installed at.
func (r *Router) uninstallUp(link, sub string) {
	key := upKey(link, sub)
	delete(r.pending, key)
	r.ver++
	for _, up := range r.upsFor(link) {
		r.send(up, Msg{Kind: MsgUninstall, Sub: key, Epoch: r.cfg.Incarnation, Version: r.ver})
	}
}

// upstreamAck records an upstream neighbour's install acknowledgement and,
// once every neighbour the install went to has acknowledged, acknowledges
// the install down its link. Only an acknowledgement of one of this
// incarnation's installs upstream for the pending key counts: one for an
// earlier incarnation's, or for an install since withdrawn and made again,
// may have been made before the neighbour held the filter as it is now.
func (r *Router) upstreamAck(env Envelope) {
	m := env.Msg
	pi, ok := r.pending[m.Sub]
	if !ok || !contains(pi.ups, env.From) {
		return // a duplicate, or for an install since withdrawn
	}
	if m.Epoch != r.cfg.Incarnation || m.Version < pi.first {
		return // answers an install this one does not continue
	}
	pi.acks[env.From] = m
	if len(pi.acks) < len(pi.ups) {
		return
	}
	delete(r.pending, m.Sub)
	l := r.links[pi.link]
	if l == nil {
		return
	}
	r.installAck(pi.link, l, pi)
}

// installAck tells the link, per pubend whose knowledge flows toward it,
// the highest tick forwarded toward it by this router or any hop above
// (every later tick is filtered with the new filter included at every
// hop), and every filtering hop's stamp: this router's current one for
// the link, and those its upstream neighbours acknowledged with.
func (r *Router) installAck(to string, l *link, pi *upInstall) {
	ct := CT{}
	for _, p := range slices.Sorted(mapKeys(r.cfg.Upstream)) {
		up := r.cfg.Upstream[p]
		if up == to {
			continue // the link is upstream for p: p's knowledge never goes down it
		}
		ct[p] = max(l.lastFwd[p], pi.acks[up].CT[p])
	}
	stamps := []Stamp{{Node: r.cfg.Node, Epoch: r.cfg.Incarnation, Version: l.gen}}
	for _, up := range pi.ups {
		stamps = append(stamps, pi.acks[up].Stamps...)
	}
	r.send(to, Msg{Kind: MsgInstallAck, Sub: pi.sub, CT: ct, Stamps: stamps, Epoch: pi.epoch, Version: pi.ver})
}

// answerResync answers an upstream neighbour's resync with this router's
// whole filter set toward it: the union of its other links' sets (the
// asker's own filters would only come back to it). While one of those
// sets is incomplete (after this router restarted) the union could miss
// a filter, so the resync goes unanswered; the neighbour asks again.
func (r *Router) answerResync(env Envelope) {
	if !contains(r.ups, env.From) {
		return
	}
	var subs []SubFilter
	for _, name := range r.cfg.Downstream {
		if name == env.From {
			continue
		}
		l := r.links[name]
		if !l.complete {
			return
		}
		for _, sub := range slices.Sorted(mapKeys(l.filters)) {
			subs = append(subs, SubFilter{Sub: upKey(name, sub), Filter: l.filters[sub].filter})
		}
	}
	r.ver++
	r.send(env.From, Msg{Kind: MsgFilters, Subs: subs, Epoch: r.cfg.Incarnation, Version: r.ver, Nonce: env.Msg.Nonce})
}

// flood passes a claim on to every neighbour but the one it came from, so
// it reaches every SHB of the tree (each neighbour once, though in a mesh
// a neighbour is both upstream and downstream).
func (r *Router) flood(env Envelope) {
	for _, name := range r.neighbours() {
		if name != env.From {
			r.send(name, env.Msg)
		}
	}
}

// neighbours returns the downstream neighbours, then the upstream ones
// that are not also downstream.
func (r *Router) neighbours() []string {
	ns := slices.Clone(r.cfg.Downstream)
	for _, up := range r.ups {
		if !contains(ns, up) {
			ns = append(ns, up)
		}
	}
	return ns
}
