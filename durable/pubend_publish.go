package durable

import "slices"

// publish handles a publish (rule PHB 2): log a new sequence once, answer a
// duplicate with its recorded tick, refuse a sequence that skips ahead.
func (p *Pubend) publish(now Tick, from string, m Msg) {
	d := p.dedup[m.Publisher]
	switch {
	case m.Seq <= d.seq:
		tick := Tick(0)
		if m.Seq == d.seq {
			tick = d.tick
		}
		// Sent after this Ready's writes are synced, so after the batch
		// that logged it.
		p.send(from, Msg{Kind: MsgPubAck, Publisher: m.Publisher, Seq: m.Seq, Tick: tick})
	case m.Seq > d.seq+1:
		p.send(from, Msg{Kind: MsgPubRefused, Publisher: m.Publisher, Seq: d.seq})
	default:
		t := p.ticker.Assign(now)
		p.lastEvent = now
		p.dedup[m.Publisher] = dedupEntry{seq: m.Seq, tick: t, last: now}
		rec := logRecord{Publisher: m.Publisher, Seq: m.Seq, Event: m.Event}
		p.w.set(phbLogKey(p.cfg.ID, t), rec.encode())
		p.w.set(phbDedupKey(p.cfg.ID, m.Publisher), encodeTicks(Tick(m.Seq), t, now))
		p.batch = append(p.batch, logged{tick: t, event: m.Event})
		p.logged = append(p.logged, t)
		p.send(from, Msg{Kind: MsgPubAck, Publisher: m.Publisher, Seq: m.Seq, Tick: t})
	}
}

// announceBatch queues the data messages of the current batch; Ready
// returns them after the batch's writes, so they go out only once synced.
// A D tick implies S for the ticks since the previous announcement.
func (p *Pubend) announceBatch() {
	if len(p.batch) == 0 {
		return
	}
	p.cover(p.batch[len(p.batch)-1].tick)
	for _, l := range p.batch {
		p.broadcast(Msg{Kind: MsgData, Tick: l.tick, Prev: p.ticker.LastAnnounced(), Event: l.event})
		p.ticker.Announced(l.tick)
	}
	p.batch = p.batch[:0]
}

// silence announces that no event will take the ticks from the last
// announced one up to now, stopping below any event still waiting for its
// sync (rule PHB 4).
func (p *Pubend) silence(now Tick) {
	end := now
	if len(p.batch) > 0 {
		end = min(end, p.batch[0].tick-1)
	}
	from := p.ticker.LastAnnounced() + 1
	if end < from {
		return
	}
	p.cover(end)
	p.broadcast(Msg{Kind: MsgSilence, From: from, To: end})
	p.ticker.Announced(end)
	p.lastSilence = now
}

// expireDedup forgets the dedup entries of publishers idle longer than
// DedupExpiry (rule PHB 7).
func (p *Pubend) expireDedup(now Tick) {
	if p.cfg.DedupExpiry <= 0 {
		return
	}
	for _, pub := range slices.Sorted(mapKeys(p.dedup)) {
		if now-p.dedup[pub].last > p.cfg.DedupExpiry {
			delete(p.dedup, pub)
			p.w.del(phbDedupKey(p.cfg.ID, pub))
		}
	}
}
