package sim

import "github.com/sift-pubsub/sift/scribe"

// event is a message in flight: it arrives at node to at time at. seq
// breaks ties in sending order, which makes the run deterministic.
type event struct {
	at  scribe.Time
	seq uint64
	to  scribe.Addr
	msg scribe.Message
}

// queue is a binary min-heap of events ordered by (at, seq).
type queue []event

func (q queue) less(i, j int) bool {
	return q[i].at < q[j].at || (q[i].at == q[j].at && q[i].seq < q[j].seq)
}

func (q *queue) push(e event) {
	*q = append(*q, e)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// pop removes the earliest event into *e.
func (q *queue) pop(e *event) {
	h := *q
	*e = h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = event{}
	h = h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h.less(l, m) {
			m = l
		}
		if r < len(h) && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
}
