package durable

import "slices"

// RouterNackStatus is an intermediate broker's nack bookkeeping for one
// pubend, as the status pages show it: the ranges it asked upstream for
// and holds back repeats of (Asked), and, per downstream link, the
// ranges that link waits for (Waiting). A stalled catch-up tick that
// sits in Asked long after it was asked says the answer never came; one
// missing from its link's Waiting says an answer would not be passed
// down. Each list shows its first statusRanges ranges (AskedRanges and
// WaitingRanges count them all).
type RouterNackStatus struct {
	Pubend        string                   `json:"pubend"`
	AskedRanges   int                      `json:"asked_ranges"`
	Asked         []RangeStatus            `json:"asked,omitempty"`
	WaitingRanges map[string]int           `json:"waiting_ranges,omitempty"`
	Waiting       map[string][]RangeStatus `json:"waiting,omitempty"`
}

// RangeStatus is a range of ticks and when its bookkeeping expires.
type RangeStatus struct {
	From    Tick `json:"from"`
	To      Tick `json:"to"`
	Expires Tick `json:"expires"`
}

// statusRanges is how many ranges a status list shows.
const statusRanges = 32

// Nacks returns the nack bookkeeping of every pubend, in pubend order.
func (r *Router) Nacks() []RouterNackStatus {
	var out []RouterNackStatus
	for _, id := range slices.Sorted(mapKeys(r.pubends)) {
		p := r.pubends[id]
		st := RouterNackStatus{Pubend: id, AskedRanges: len(p.asked)}
		for _, o := range p.asked[:min(len(p.asked), statusRanges)] {
			st.Asked = append(st.Asked, RangeStatus{From: o.r.From, To: o.r.To, Expires: o.expires})
		}
		for _, link := range slices.Sorted(mapKeys(p.waiters)) {
			ws := p.waiters[link]
			if len(ws) == 0 {
				continue
			}
			if st.Waiting == nil {
				st.Waiting, st.WaitingRanges = map[string][]RangeStatus{}, map[string]int{}
			}
			st.WaitingRanges[link] = len(ws)
			for _, w := range ws[:min(len(ws), statusRanges)] {
				st.Waiting[link] = append(st.Waiting[link], RangeStatus{From: w.r.From, To: w.r.To, Expires: w.expires})
			}
		}
		out = append(out, st)
	}
	return out
}
