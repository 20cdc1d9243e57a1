package durable

import (
	"fmt"
	"slices"
)

// nackAnswerBudget bounds the events a pubend answers nacks with per Step
// or Tick. A nack for a long outage (100,000 events) is answered over
// many steps, from the oldest tick up, instead of in one burst that
// overruns every queue on the way and is dropped and asked for again
// whole: answers are pipelined and bounded.
const nackAnswerBudget = 2048

// nack answers a nack from the log (rule PHB 5): lost for released ticks
// at once; D for logged ones and S for the rest, as answerNacks reaches
// them; never anything above the last announced tick, which is still Q
// here too. Ranges asked again while being answered are merged, so a
// repeated nack costs nothing more; ticks answered lately are left out
// of it, unless it is a refetch (Msg.Refetch: a catch-up session's,
// which the answer going on has gone by).
func (p *Pubend) nack(from string, m Msg) error {
	for _, r := range m.Ranges {
		r.To = min(r.To, p.ticker.LastAnnounced())
		if r.Empty() {
			continue
		}
		if r.From <= p.lost {
			p.send(from, p.lostMsg())
			r.From = p.lost + 1
			if r.Empty() {
				continue
			}
		}
		if p.answers == nil {
			p.answers = map[string][]Range{}
		}
		ask := []Range{r}
		if !m.Refetch {
			ask = p.notAnsweredLately(from, r)
		}
		p.answers[from] = mergeRanges(append(p.answers[from], ask...))
	}
	return p.answerNacks()
}

// notAnsweredLately returns r without the ticks already answered to the
// asker in the answer still going on (they are on their way). A long
// answer takes many steps and round trips to reach its SHB, which
// meanwhile may ask again from where it stands; answering that from its
// start would send again everything still on its way, and on a loaded
// path the repeats outgrew the answers. Once an answer is complete, a
// nack for its ticks is answered again (its answer may have been lost).
func (p *Pubend) notAnsweredLately(from string, r Range) []Range {
	span, ok := p.answered[from]
	if !ok || len(p.answers[from]) == 0 {
		return []Range{r}
	}
	return subtract(r, span)
}

// noteAnswered records that span was answered to an asker: it extends the
// span answered so far when it follows on it, leaves it when span lies
// below it (a refetch answered in between, oldest tick first, while the
// answer going on continues above), and starts a new one otherwise.
func (p *Pubend) noteAnswered(to string, span Range) {
	if p.answered == nil {
		p.answered = map[string]Range{}
	}
	was, ok := p.answered[to]
	switch {
	case ok && span.From >= was.From && span.From <= was.To+1:
		span = Range{was.From, max(was.To, span.To)}
	case ok && span.To < was.From:
		return
	}
	p.answered[to] = span
}

// answerNacks answers the nacked ranges, oldest tick first per asker, the
// askers in turn, up to nackAnswerBudget events; the rest waits for the
// next Step or Tick. Ranges that became L meanwhile are answered lost.
func (p *Pubend) answerNacks() error {
	budget := nackAnswerBudget
	for _, to := range slices.Sorted(mapKeys(p.answers)) {
		rs := p.answers[to]
		for len(rs) > 0 && budget > 0 {
			r := rs[0]
			if r.From <= p.lost {
				p.send(to, p.lostMsg())
				if r.From = p.lost + 1; r.Empty() {
					rs = rs[1:]
					continue
				}
			}
			rest, n, err := p.answerRange(to, r, budget)
			if err != nil {
				return fmt.Errorf("pubend %s: nack %v: %w", p.cfg.ID, r, err)
			}
			budget -= n
			if rest.Empty() {
				rs = rs[1:]
			} else {
				rs[0] = rest
			}
		}
		if len(rs) == 0 {
			delete(p.answers, to)
			delete(p.answered, to)
		} else {
			p.answers[to] = rs
		}
	}
	return nil
}

// answerRange answers r with at most limit events: D for each logged tick
// and S between them. It returns the part of r not answered (empty when
// all was) and the events sent.
func (p *Pubend) answerRange(to string, r Range, limit int) (Range, int, error) {
	if r.From == r.To {
		n, err := p.answerTick(to, r.From)
		if err != nil {
			return r, n, err
		}
		return Range{1, 0}, n, nil
	}
	return p.answerScan(to, r, limit)
}

// answerScan is answerRange by a scan of the log over r.
func (p *Pubend) answerScan(to string, r Range, limit int) (Range, int, error) {
	prev := r.From - 1
	n := 0
	var derr error
	err := p.w.store.Scan(phbLogKey(p.cfg.ID, r.From), phbLogKey(p.cfg.ID, r.To+1), func(k, v []byte) bool {
		if n == limit {
			return false
		}
		t, err := keyNumOf(k)
		if err != nil {
			derr = err
			return false
		}
		rec, err := decodeLogRecord(v)
		if err != nil {
			derr = err
			return false
		}
		p.send(to, Msg{Kind: MsgData, Tick: Tick(t), Prev: prev, Event: rec.Event})
		prev = Tick(t)
		n++
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return r, n, err
	}
	if n == limit && prev < r.To {
		p.noteAnswered(to, Range{r.From, prev})
		return Range{prev + 1, r.To}, n, nil
	}
	if prev < r.To {
		p.send(to, Msg{Kind: MsgSilence, From: prev + 1, To: r.To})
	}
	p.noteAnswered(to, r)
	return Range{1, 0}, n, nil
}

// answerTick answers the one-tick range [t, t] with a point lookup, D or
// S, and returns the events sent. Catch-up sessions nack their own ticks
// one by one where their events are sparse in the log (subscribers of
// disjoint groups), so a nack is often thousands of one-tick ranges; a
// scan of each set up a store iterator per tick (a seek in every level
// of the store), where a lookup stops at the first level holding the
// key.
func (p *Pubend) answerTick(to string, t Tick) (int, error) {
	v, ok, err := p.w.store.Get(phbLogKey(p.cfg.ID, t))
	if err != nil {
		return 0, err
	}
	n := 0
	if ok {
		rec, err := decodeLogRecord(v)
		if err != nil {
			return 0, err
		}
		p.send(to, Msg{Kind: MsgData, Tick: t, Prev: t - 1, Event: rec.Event})
		n = 1
	} else {
		p.send(to, Msg{Kind: MsgSilence, From: t, To: t})
	}
	p.noteAnswered(to, Range{t, t})
	return n, nil
}

// AnswersPending returns the nacked ticks still to be answered, over
// every asker (answered nackAnswerBudget events per Step or Tick): a
// backlog that only grows means answers are asked for faster than they
// go out.
func (p *Pubend) AnswersPending() Tick {
	var n Tick
	for _, rs := range p.answers {
		for _, r := range rs {
			n += r.To - r.From + 1
		}
	}
	return n
}
