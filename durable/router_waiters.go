package durable

import (
	"cmp"
	"slices"
)

// waiter is a nack from below waiting for an answer from upstream: the
// ticks one link asked for, and when the wait ends.
type waiter struct {
	r       Range
	expires Tick
}

// Each link's waiters are disjoint ranges sorted by From (nacks for
// overlapping or adjacent ticks merge, keeping the later expiry), so a
// knowledge message costs a binary search per link, not a walk over every
// waiting nack: with thousands of single-tick catch-up nacks waiting,
// the walk dominated an intermediate router's work.

// firstWaiter returns the index of the first of ws ending at or above t.
func firstWaiter(ws []waiter, t Tick) int {
	i, _ := slices.BinarySearchFunc(ws, t, func(w waiter, t Tick) int { return cmp.Compare(w.r.To, t) })
	return i
}

// addWaiter records that link waits for q until expires.
func (p *routerPubend) addWaiter(link string, q Range, expires Tick) {
	ws := p.waiters[link]
	i := firstWaiter(ws, q.From-1) // an entry ending right before q merges too
	j := i
	w := waiter{r: q, expires: expires}
	for j < len(ws) && ws[j].r.From <= q.To+1 {
		w.r = Range{min(w.r.From, ws[j].r.From), max(w.r.To, ws[j].r.To)}
		w.expires = max(w.expires, ws[j].expires)
		j++
	}
	p.waiters[link] = slices.Replace(ws, i, j, w)
	p.nextExpiry = min(p.nextExpiry, expires)
}

// takeWaiters reports whether link waits for any tick of span, and stops
// waiting for the ticks span answers. The rest of a wait span answered
// part of is renewed for WaitTimeout: its answer is flowing, so the wait
// ends only WaitTimeout after the last of it, however long the whole
// answer takes.
func (r *Router) takeWaiters(p *routerPubend, link string, span Range) bool {
	ws := p.waiters[link]
	i := firstWaiter(ws, span.From)
	if i == len(ws) || ws[i].r.From > span.To {
		return false
	}
	j := i
	var rest []waiter
	for j < len(ws) && ws[j].r.From <= span.To {
		for _, x := range subtract(ws[j].r, span) {
			rest = append(rest, waiter{r: x, expires: max(ws[j].expires, r.now+r.cfg.WaitTimeout)})
		}
		j++
	}
	p.waiters[link] = slices.Replace(ws, i, j, rest...)
	return true
}

// expireWaiters drops the waits that ended by now.
func (p *routerPubend) expireWaiters(now Tick) {
	if now < p.nextExpiry {
		return
	}
	p.nextExpiry = MaxTick
	for link, ws := range p.waiters {
		ws = slices.DeleteFunc(ws, func(w waiter) bool { return w.expires <= now })
		if len(ws) == 0 {
			delete(p.waiters, link)
			continue
		}
		p.waiters[link] = ws
		for _, w := range ws {
			p.nextExpiry = min(p.nextExpiry, w.expires)
		}
	}
}
