package durable

import (
	"cmp"
	"slices"
)

// nackFromBelow answers what the cache knows of each nacked range and
// forwards the rest upstream, unless a nack for it is already outstanding
// (consolidation); the asker waits for the answer either way. A refetch
// (Msg.Refetch) is forwarded marked.
func (r *Router) nackFromBelow(env Envelope) error {
	m := env.Msg
	p, err := r.pubend(m.Pubend)
	if err != nil {
		return err
	}
	if env.From == r.cfg.Upstream[m.Pubend] {
		return nil // from the pubend's side: its knowledge never flows back there
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
			p.addWaiter(env.From, q, r.now+r.cfg.WaitTimeout)
			ask = append(ask, p.unasked(q)...)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	for _, q := range ask {
		p.addAsked(outstanding{r: q, expires: r.now + r.cfg.NackTimeout})
	}
	r.Stats.NacksUpstream += len(ask)
	r.send(r.cfg.Upstream[m.Pubend], Msg{Kind: MsgNack, Pubend: m.Pubend, Ranges: ask, Refetch: m.Refetch})
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
			r.forward(to, Msg{Kind: MsgLost, Pubend: pubend, Tick: p.stream.Lost(), From: p.lostFrom})
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
// nack. p.asked is sorted by From and its ranges are disjoint (each was
// an unasked part when added), so only the entries overlapping q are
// looked at: a catch-up's thousands of outstanding single-tick nacks cost
// a binary search per range, not a walk.
func (p *routerPubend) unasked(q Range) []Range {
	rest := []Range{q}
	for i := p.firstAsked(q.From); i < len(p.asked) && p.asked[i].r.From <= q.To; i++ {
		var next []Range
		for _, x := range rest {
			next = append(next, subtract(x, p.asked[i].r)...)
		}
		rest = next
	}
	return rest
}

// firstAsked returns the index of the first outstanding nack ending at or
// above t.
func (p *routerPubend) firstAsked(t Tick) int {
	i, _ := slices.BinarySearchFunc(p.asked, t, func(o outstanding, t Tick) int { return cmp.Compare(o.r.To, t) })
	return i
}

// addAsked records an outstanding upstream nack, keeping p.asked sorted.
func (p *routerPubend) addAsked(o outstanding) {
	p.asked = slices.Insert(p.asked, p.firstAsked(o.r.From), o)
}

// answered takes span, knowledge just learned from upstream, out of the
// outstanding nacks: they wait only for the ticks not answered yet. A
// long answer (an outage's recovery) comes oldest tick first over many
// messages; a later nack for ticks it already brought, which the cache
// has since forgotten (a catch-up session fetching again events its SHB
// passed before the session was back), goes upstream at once instead of
// waiting for an outstanding nack whose answer has gone by, until it
// expires. A fully answered nack is forgotten, so a later nack for those
// ticks (one the answer did not reach) goes upstream at once too. The
// pieces of an entry keep p.asked sorted and disjoint.
func (p *routerPubend) answered(span Range) {
	i := p.firstAsked(span.From)
	j := i
	for j < len(p.asked) && p.asked[j].r.From <= span.To {
		j++
	}
	if i == j {
		return
	}
	var rest []outstanding
	for _, o := range p.asked[i:j] {
		for _, r := range subtract(o.r, span) {
			rest = append(rest, outstanding{r: r, expires: o.expires})
		}
	}
	p.asked = slices.Replace(p.asked, i, j, rest...)
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
