package sim

import "github.com/sift-pubsub/sift/scribe"

// LinkStress summarises messages per physical link.
type LinkStress struct {
	// MeanAll is the mean over every link of the topology (router links and
	// end nodes' access links).
	MeanAll float64 `json:"mean_all_links"`
	// MeanUsed is the mean over the links that carried at least one message.
	MeanUsed float64 `json:"mean_used_links"`
	// Max is the most messages on one link.
	Max int64 `json:"max"`
	// LinksUsed is the number of links that carried at least one message.
	LinksUsed int `json:"links_used"`
}

// stress counts messages per link.
type stress []int64

func newStress(net LinkNetwork) stress { return make(stress, net.NumLinks()) }

// unicast counts one message from a to b on every link of its path.
func (st stress) unicast(net LinkNetwork, a, b scribe.Addr) {
	net.Links(a, b, func(l int32) { st[l]++ })
}

// ipMulticast counts one message on every link of the shortest-path tree
// from root to the members: the root's and the members' access links and
// the router links that reach the members' routers.
func (st stress) ipMulticast(net LinkNetwork, root scribe.Addr, members []scribe.Addr) {
	st[net.AccessLink(root)]++
	routers := make([]int32, 0, len(members))
	for _, m := range members {
		if m != root {
			st[net.AccessLink(m)]++
			routers = append(routers, net.Router(m))
		}
	}
	net.RouterTree(net.Router(root), routers, func(l int32) { st[l]++ })
}

func (st stress) summary() LinkStress {
	var ls LinkStress
	var sum int64
	for _, c := range st {
		if c > 0 {
			ls.LinksUsed++
			sum += c
			ls.Max = max(ls.Max, c)
		}
	}
	if len(st) > 0 {
		ls.MeanAll = float64(sum) / float64(len(st))
	}
	if ls.LinksUsed > 0 {
		ls.MeanUsed = float64(sum) / float64(ls.LinksUsed)
	}
	return ls
}

// groupStress counts one group's messages per link, to average the stress
// over the links that group used, then over groups.
type groupStress struct {
	count map[int32]int64
	sum   float64 // of per-group means
	n     int     // groups
}

func newGroupStress() *groupStress { return &groupStress{count: map[int32]int64{}} }

func (g *groupStress) unicast(net LinkNetwork, a, b scribe.Addr) {
	net.Links(a, b, func(l int32) { g.count[l]++ })
}

// endGroup closes the current group's count.
func (g *groupStress) endGroup() {
	if len(g.count) == 0 {
		return
	}
	var total int64
	for _, c := range g.count {
		total += c
	}
	g.sum += float64(total) / float64(len(g.count))
	g.n++
	clear(g.count)
}

// mean is the average over groups of each group's mean stress on the links
// it used.
func (g *groupStress) mean() float64 {
	if g.n == 0 {
		return 0
	}
	return g.sum / float64(g.n)
}
