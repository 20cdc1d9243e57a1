package durable

// nackFromBelow answers what the cache knows of each nacked range and
// forwards the rest upstream, unless a nack for it is already outstanding
// (consolidation); the asker waits for the answer either way.
func (r *Router) nackFromBelow(env Envelope) error {
	m := env.Msg
	p, err := r.pubend(m.Pubend)
	if err != nil {
		return err
	}
	var ask []Range
	for _, rg := range m.Ranges {
		r.Stats.NacksFromBelow++
		if rg.Empty() {
			continue
		}
		qs := p.stream.QRanges(rg)
		// Forgotten ticks (at or below the base, above the L prefix) count
		// as unknown.
		forgotten := rg.Intersect(Range{p.stream.Lost() + 1, p.stream.Base()})
		if !forgotten.Empty() {
			qs = mergeRanges(append(qs, forgotten))
		}
		r.answerKnown(env.From, m.Pubend, p, rg, qs)
		for _, q := range qs {
			p.waiters = append(p.waiters, waiter{link: env.From, r: q, expires: r.now + r.cfg.NackTimeout})
			ask = append(ask, p.unasked(q)...)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	for _, q := range ask {
		p.asked = append(p.asked, outstanding{r: q, expires: r.now + r.cfg.NackTimeout})
	}
	r.Stats.NacksUpstream += len(ask)
	r.send(r.cfg.Upstream[m.Pubend], Msg{Kind: MsgNack, Pubend: m.Pubend, Ranges: ask})
	return nil
}

// answerKnown sends down the link the parts of rg the cache knows (all of
// rg but the ranges in unknown).
func (r *Router) answerKnown(to, pubend string, p *routerPubend, rg Range, unknown []Range) {
	answered := false
	for _, seg := range p.stream.Segments(rg) {
		if seg.State == Q || overlapsAny(seg.Range, unknown) {
			continue
		}
		answered = true
		switch seg.State {
		case L:
			r.forward(to, Msg{Kind: MsgLost, Pubend: pubend, Tick: p.stream.Lost()})
		case S:
			r.forward(to, Msg{Kind: MsgSilence, Pubend: pubend, From: seg.From, To: seg.To})
		case D:
			r.forward(to, Msg{Kind: MsgData, Pubend: pubend, Tick: seg.From, Prev: seg.From - 1, Event: seg.Event})
		}
	}
	if answered && len(unknown) == 0 {
		r.Stats.NacksAnswered++
	}
}

// unasked returns the parts of q not covered by an outstanding upstream
// nack.
func (p *routerPubend) unasked(q Range) []Range {
	rest := []Range{q}
	for _, o := range p.asked {
		var next []Range
		for _, x := range rest {
			next = append(next, subtract(x, o.r)...)
		}
		rest = next
	}
	return rest
}

// subtract returns x minus y (zero, one or two ranges).
func subtract(x, y Range) []Range {
	if x.Intersect(y).Empty() {
		return []Range{x}
	}
	var out []Range
	if x.From < y.From {
		out = append(out, Range{x.From, y.From - 1})
	}
	if y.To < x.To {
		out = append(out, Range{y.To + 1, x.To})
	}
	return out
}

func overlapsAny(x Range, rs []Range) bool {
	for _, r := range rs {
		if !x.Intersect(r).Empty() {
			return true
		}
	}
	return false
}
