package durable

import "slices"

// upKey names a link's subscription in this router's own filter set
// upstream: the same subscription id may be registered below two links (a
// subscriber that reconnected elsewhere), so the link is part of the name.
// The key is only ever looked up, never parsed.
func upKey(link, sub string) string { return link + "|" + sub }

// installUp installs a link's new filter at every upstream neighbour, as
// one of this router's own filters, and waits for their acknowledgements.
// A resent install from below is sent up again (the earlier one or its
// acknowledgement may be lost).
func (r *Router) installUp(link, sub string, m Msg) {
	key := upKey(link, sub)
	r.pending[key] = &upInstall{link: link, sub: sub, acks: map[string]Msg{}}
	r.ver++
	for _, up := range r.ups {
		r.send(up, Msg{Kind: MsgInstall, Sub: key, Filter: m.Filter, Epoch: r.cfg.Incarnation, Version: r.ver})
	}
}

// uninstallUp removes a link's filter from every upstream neighbour.
func (r *Router) uninstallUp(link, sub string) {
	key := upKey(link, sub)
	delete(r.pending, key)
	r.ver++
	for _, up := range r.ups {
		r.send(up, Msg{Kind: MsgUninstall, Sub: key, Epoch: r.cfg.Incarnation, Version: r.ver})
	}
}

// upstreamAck records an upstream neighbour's install acknowledgement and,
// once every neighbour has acknowledged, acknowledges the install down its
// link.
func (r *Router) upstreamAck(env Envelope) {
	pi, ok := r.pending[env.Msg.Sub]
	if !ok || !contains(r.ups, env.From) {
		return // a duplicate, or for an install since withdrawn
	}
	pi.acks[env.From] = env.Msg
	if len(pi.acks) < len(r.ups) {
		return
	}
	delete(r.pending, env.Msg.Sub)
	l := r.links[pi.link]
	if l == nil {
		return
	}
	r.installAck(pi.link, l, pi.sub, pi.acks)
}

// installAck tells the link, per pubend, the highest tick forwarded toward
// it by this router or any hop above (every later tick is filtered with the
// new filter included at every hop), and every filtering hop's stamp: this
// router's current one for the link, and those its upstream neighbours
// acknowledged with.
func (r *Router) installAck(to string, l *link, sub string, ups map[string]Msg) {
	ct := CT{}
	for _, p := range slices.Sorted(mapKeys(r.cfg.Upstream)) {
		ct[p] = max(l.lastFwd[p], ups[r.cfg.Upstream[p]].CT[p])
	}
	stamps := []Stamp{{Node: r.cfg.Node, Epoch: r.cfg.Incarnation, Version: l.gen}}
	for _, up := range r.ups {
		stamps = append(stamps, ups[up].Stamps...)
	}
	r.send(to, Msg{Kind: MsgInstallAck, Sub: sub, CT: ct, Stamps: stamps})
}

// answerResync answers an upstream neighbour's resync with this router's
// whole filter set, the union of its links' sets. While a link's set is
// incomplete (after this router restarted) the union could miss a
// filter, so the resync goes unanswered; the neighbour asks again.
func (r *Router) answerResync(env Envelope) {
	if !contains(r.ups, env.From) {
		return
	}
	var subs []SubFilter
	for _, name := range r.cfg.Downstream {
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
// it reaches every SHB of the tree.
func (r *Router) flood(env Envelope) {
	for _, name := range r.cfg.Downstream {
		if name != env.From {
			r.send(name, env.Msg)
		}
	}
	for _, up := range r.ups {
		if up != env.From {
			r.send(up, env.Msg)
		}
	}
}
