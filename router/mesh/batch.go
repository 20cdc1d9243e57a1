package mesh

import (
	"fmt"

	"github.com/sift-pubsub/sift/match"
)

// SubscribeBatch installs local client subscriptions first, first+1, ...
// (one per filter of fs) as one input: every filter goes into the routing
// table, each link with a net change gets one Routes message holding all
// of it (and the others a barrier), and one Ready (Batch set, Ref first)
// comes once every link has acknowledged. An empty batch is an error and
// changes nothing. As for Subscribe, the caller keeps the subscriptions
// and never reuses a ref the client holds.
//
// Unsubscribing a member before the Ready does not hold it back (the
// batch's Ready then covers the members still subscribed).
func (m *Mesh) SubscribeBatch(c Client, first uint64, fs []match.Filter) (Output, error) {
	var out Output
	if len(fs) == 0 {
		return out, fmt.Errorf("client %d: empty subscription batch", c)
	}
	d := delta{}
	from := m.clientIface(c)
	for _, f := range fs {
		m.subscribe(d, from, f)
	}
	m.flush(d, &out)
	m.barrier(&out, 0)
	m.wait(pending{client: c, ref: first, batch: true}, 0, &out)
	return out, nil
}
