package durable

import "fmt"

// nack answers a nack from the log (rule PHB 5): lost for released ticks, D
// for logged ones, S for the rest; never anything above the last announced
// tick, which is still Q here too.
func (p *Pubend) nack(from string, m Msg) error {
	for _, r := range m.Ranges {
		r.To = min(r.To, p.ticker.LastAnnounced())
		if r.Empty() {
			continue
		}
		if r.From <= p.lost {
			p.send(from, Msg{Kind: MsgLost, Tick: p.lost})
			r.From = p.lost + 1
			if r.Empty() {
				continue
			}
		}
		if err := p.answerRange(from, r); err != nil {
			return fmt.Errorf("pubend %s: nack %v: %w", p.cfg.ID, r, err)
		}
	}
	return nil
}

func (p *Pubend) answerRange(to string, r Range) error {
	prev := r.From - 1
	var derr error
	err := p.w.store.Scan(phbLogKey(p.cfg.ID, r.From), phbLogKey(p.cfg.ID, r.To+1), func(k, v []byte) bool {
		n, err := keyNumOf(k)
		if err != nil {
			derr = err
			return false
		}
		rec, err := decodeLogRecord(v)
		if err != nil {
			derr = err
			return false
		}
		t := Tick(n)
		p.send(to, Msg{Kind: MsgData, Tick: t, Prev: prev, Event: rec.Event})
		prev = t
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return err
	}
	if prev < r.To {
		p.send(to, Msg{Kind: MsgSilence, From: prev + 1, To: r.To})
	}
	return nil
}
