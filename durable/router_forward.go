package durable

// knowledge merges a knowledge message from upstream into the cache and
// forwards it to every link it is new to or that waits for it.
func (r *Router) knowledge(env Envelope) error {
	m := env.Msg
	p, err := r.pubend(m.Pubend)
	if err != nil {
		return err
	}
	span, fresh := r.learn(p, m)
	// Knowledge below the cache's base is not fresh (the cache forgot
	// those ticks) but answers an outstanding nack all the same.
	p.answered(span)
	up := r.cfg.Upstream[m.Pubend]
	for _, name := range r.cfg.Downstream {
		if name == up {
			continue // in a mesh, the link it came from; never back upstream
		}
		waited := r.takeWaiters(p, name, span)
		if fresh || waited || m.Kind == MsgLost {
			r.forward(name, m)
		}
	}
	if p.stream.runCount() > r.cfg.CacheRuns {
		p.stream.trimRuns(r.cfg.CacheRuns)
	}
	return nil
}

// learn merges m into p's stream and returns the ticks m speaks of and
// whether any of its knowledge was new.
func (r *Router) learn(p *routerPubend, m Msg) (Range, bool) {
	switch m.Kind {
	case MsgData:
		fresh := len(p.stream.AddSilence(m.Prev+1, m.Tick-1)) > 0
		fresh = p.stream.AddData(m.Tick, m.Event) || fresh
		return Range{m.Prev + 1, m.Tick}, fresh
	case MsgSilence:
		if m.Filtered {
			// Filtered above for this router's link, with the filters of
			// that moment: not knowledge to cache or to answer nacks
			// with. It is passed down as it is, stamp and all.
			return Range{m.From, m.To}, true
		}
		return Range{m.From, m.To}, len(p.stream.AddSilence(m.From, m.To)) > 0
	default: // MsgLost
		grew := p.stream.AddLost(m.Tick)
		if grew {
			p.lostFrom = m.From
		}
		return Range{0, m.Tick}, grew
	}
}

// forward sends knowledge down one link, turning a D tick into S when no
// filter of the link matches it (only once the link's filter set is
// complete). A filtered silence that continues the one this router queued
// last to the link, since the last Ready, with the same stamp, widens it
// instead of following it (extendFiltered).
func (r *Router) forward(name string, m Msg) {
	l := r.links[name]
	filtered := m.Kind == MsgData && l.complete && !l.matches(m)
	if filtered {
		m = Msg{Kind: MsgSilence, Pubend: m.Pubend, From: m.Prev + 1, To: m.Tick,
			Filtered: true, Origin: r.cfg.Node, Epoch: r.cfg.Incarnation, Version: l.gen}
	}
	switch m.Kind {
	case MsgData:
		l.lastFwd[m.Pubend] = max(l.lastFwd[m.Pubend], m.Tick)
	case MsgSilence:
		l.lastFwd[m.Pubend] = max(l.lastFwd[m.Pubend], m.To)
	}
	if filtered && r.extendFiltered(l, m) {
		return
	}
	r.send(name, m)
	l.filtered = filtered
}

// extendFiltered widens the filtered silence last queued to l to the end
// of m, a filtered silence of the same pubend and stamp that starts right
// after it, and reports whether it did. Every receiver treats the two as
// the one silence over both ranges: what it does with a filtered silence
// depends on its stamp and adds up over ticks. A link with no matching
// filter (a replica's router, an SHB without subscribers there) then gets
// one message per Ready instead of one per event.
func (r *Router) extendFiltered(l *link, m Msg) bool {
	if !l.filtered || r.noMerge {
		return false
	}
	prev := r.out.at(l.lastOut)
	if prev == nil || prev.Msg.Pubend != m.Pubend || prev.Msg.Origin != m.Origin || prev.Msg.Epoch != m.Epoch ||
		prev.Msg.Version != m.Version || prev.Msg.To+1 != m.From {
		return false
	}
	prev.Msg.To = m.To
	r.Stats.SilencesMerged++
	return true
}
