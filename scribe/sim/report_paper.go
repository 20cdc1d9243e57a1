package sim

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/sift-pubsub/sift/scribe"
)

// PaperSize is the size of the group of rank r (1-based) among n nodes in
// the Scribe paper's experiment: floor(n * r^-1.25 + 0.5).
func PaperSize(n, r int) int { return int(math.Floor(float64(n)*math.Pow(float64(r), -1.25) + 0.5)) }

// PaperRun is one pass of the paper experiment, with or without the
// bottleneck remover.
type PaperRun struct {
	// BottleneckCap is the children cap (0: remover off).
	BottleneckCap int `json:"bottleneck_cap"`
	// RAD and RMD are, over the groups, the ratio of average and of maximum
	// delay from the root to the members through the tree against IP
	// multicast (the shortest path).
	RAD       Summary `json:"rad"`
	RMD       Summary `json:"rmd"`
	RADP90    float64 `json:"rad_p90"`
	RMDP90    float64 `json:"rmd_p90"`
	Tables    Summary `json:"children_tables_per_node"`
	Entries   Summary `json:"children_entries_per_node"`
	NodesWith int     `json:"nodes_with_children"`
	// Multicast is the link stress of one multicast from each group's root;
	// Join that of every message sent while members joined.
	Multicast    LinkStress `json:"link_stress_multicast"`
	Join         LinkStress `json:"link_stress_join"`
	JoinMessages int64      `json:"join_messages"`
	Redirects    int64      `json:"redirects"`
}

// PaperReport reproduces the Scribe paper's 100,000-node experiment.
type PaperReport struct {
	Nodes       int        `json:"nodes"`
	Routers     int        `json:"routers"`
	RouterLinks int        `json:"router_links"`
	IDBits      int        `json:"id_bits"`
	B           int        `json:"b"`
	Leaf        int        `json:"leaf"`
	Groups      int        `json:"groups"`
	Memberships int        `json:"memberships"`
	Seed        uint64     `json:"seed"`
	IPMulticast LinkStress `json:"link_stress_ip_multicast"`
	Unicast     LinkStress `json:"link_stress_unicast"`
	Runs        []PaperRun `json:"runs"`
}

// PaperGroups is the number of groups in the paper's experiment.
const PaperGroups = 1500

// PaperCap is the bottleneck remover's children cap in the paper.
const PaperCap = 64

// RunPaper generates a 5,050-router transit-stub topology, attaches o.Nodes
// end nodes (default 100,000; 128-bit ids, b=4, |L|=16, |M|=32) to random
// stub routers, builds Pastry tables from global knowledge, and creates
// 1,500 groups (o.Groups) whose sizes follow PaperSize, each with random members joining
// one at a time. It then multicasts once from every root. It runs twice on
// the same topology, ids, groups and members: without the bottleneck remover
// and with a cap of 64 children. IP multicast and naive unicast (the root
// sending to every member) are measured on the same groups.
func RunPaper(o Options) (*PaperReport, error) {
	o.defaults(100000, 128, 4, 16, 32)
	net, err := NewTransitStub(o.rng(streamTopology), o.topology(), o.Nodes)
	if err != nil {
		return nil, fmt.Errorf("paper report: %w", err)
	}
	o.progress("paper: %d routers, %d router links, %d nodes", net.Routers(), net.RouterLinks, o.Nodes)
	if o.Groups == 0 {
		o.Groups = PaperGroups
	}
	rep := &PaperReport{Nodes: o.Nodes, Routers: net.Routers(), RouterLinks: net.RouterLinks,
		Groups: o.Groups, Seed: o.Seed}
	for _, cap := range []int{0, PaperCap} {
		run, err := paperRun(o, net, cap, rep)
		if err != nil {
			return nil, fmt.Errorf("paper report (cap %d): %w", cap, err)
		}
		rep.Runs = append(rep.Runs, *run)
	}
	return rep, nil
}

func paperRun(o Options, net *TransitStub, cap int, rep *PaperReport) (*PaperRun, error) {
	cfg := o.config()
	cfg.MaxChildren = cap
	s, err := o.staticSim(cfg, net)
	if err != nil {
		return nil, err
	}
	rep.IDBits, rep.B, rep.Leaf = s.Cfg.Bits, s.Cfg.B, s.Cfg.Leaf
	first := len(rep.Runs) == 0
	run := &PaperRun{BottleneckCap: cap}
	mc, join := newStress(net), newStress(net)
	var ip, uni stress
	if first {
		ip, uni = newStress(net), newStress(net)
	}
	var rad, rmd []float64
	r := o.rng(streamGroups)
	for rank := 1; rank <= o.Groups; rank++ {
		key := newGroup(s, r, "group-"+strconv.Itoa(rank))
		members := sample(r, o.Nodes, PaperSize(o.Nodes, rank))
		s.OnSend = func(from, to scribe.Addr, m *scribe.Message) { join.unicast(net, from, to) }
		joinAll(s, key, members)
		s.OnSend = nil
		tm := measureTree(s, key, members, func(from, to scribe.Addr) { mc.unicast(net, from, to) })
		if err := tm.check(s, key, members); err != nil {
			return nil, fmt.Errorf("group %d: %w", rank, err)
		}
		if first {
			ip.ipMulticast(net, tm.root, members)
			for _, m := range members {
				if m != tm.root {
					uni.unicast(net, tm.root, m)
				}
			}
		}
		if len(tm.memberDelay) > 0 {
			var sumT, sumD, maxT, maxD int64
			for i, d := range tm.memberDelay {
				sumT += d
				sumD += tm.directDelay[i]
				maxT, maxD = max(maxT, d), max(maxD, tm.directDelay[i])
			}
			rad = append(rad, float64(sumT)/float64(sumD))
			rmd = append(rmd, float64(maxT)/float64(maxD))
		}
		rep.Memberships += len(members) * boolInt(first)
		if rank%100 == 0 {
			o.progress("paper (cap %d): %d of %d groups joined and multicast", cap, rank, o.Groups)
		}
	}
	tables, entries := make([]float64, len(s.Nodes)), make([]float64, len(s.Nodes))
	for i, n := range s.Nodes {
		t, e := n.ChildrenLoad()
		tables[i], entries[i] = float64(t), float64(e)
		if e > 0 {
			run.NodesWith++
		}
	}
	run.Tables, run.Entries = summarize(tables), summarize(entries)
	run.RAD, run.RMD = summarize(rad), summarize(rmd)
	run.RADP90, run.RMDP90 = percentile(rad, 90), percentile(rmd, 90)
	run.Multicast, run.Join = mc.summary(), join.summary()
	run.JoinMessages = s.Sent[scribe.KindJoin] + s.Sent[scribe.KindJoinDirect]
	run.Redirects = s.Sent[scribe.KindRedirect]
	if first {
		rep.IPMulticast, rep.Unicast = ip.summary(), uni.summary()
	}
	return run, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WriteText implements Report.
func (r *PaperReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%d nodes on a %d-router transit-stub topology (%d router links), %d-bit ids, b=%d, |L|=%d\n",
		r.Nodes, r.Routers, r.RouterLinks, r.IDBits, r.B, r.Leaf)
	fmt.Fprintf(w, "%d groups, %d memberships, seed %d\n\n", r.Groups, r.Memberships, r.Seed)
	head := []string{"measure", "no remover", fmt.Sprintf("remover (cap %d)", PaperCap)}
	var rows [][]string
	add := func(name string, val func(PaperRun) string) {
		row := []string{name}
		for _, run := range r.Runs {
			row = append(row, val(run))
		}
		rows = append(rows, row)
	}
	add("RAD median", func(x PaperRun) string { return f2(x.RAD.Median) })
	add("RAD 90th percentile", func(x PaperRun) string { return f2(x.RADP90) })
	add("RAD max", func(x PaperRun) string { return f2(x.RAD.Max) })
	add("RMD median", func(x PaperRun) string { return f2(x.RMD.Median) })
	add("RMD max", func(x PaperRun) string { return f2(x.RMD.Max) })
	add("children tables per node: mean", func(x PaperRun) string { return f2(x.Tables.Mean) })
	add("children tables per node: max", func(x PaperRun) string { return fmt.Sprint(x.Tables.Max) })
	add("children entries per node: mean", func(x PaperRun) string { return f2(x.Entries.Mean) })
	add("children entries per node: median", func(x PaperRun) string { return f1(x.Entries.Median) })
	add("children entries per node: max", func(x PaperRun) string { return fmt.Sprint(x.Entries.Max) })
	add("link stress, multicast: mean (used links)", func(x PaperRun) string { return f2(x.Multicast.MeanUsed) })
	add("link stress, multicast: mean (all links)", func(x PaperRun) string { return f2(x.Multicast.MeanAll) })
	add("link stress, multicast: max", func(x PaperRun) string { return fmt.Sprint(x.Multicast.Max) })
	add("link stress, joining: mean (used links)", func(x PaperRun) string { return f2(x.Join.MeanUsed) })
	add("link stress, joining: max", func(x PaperRun) string { return fmt.Sprint(x.Join.Max) })
	add("JOIN messages", func(x PaperRun) string { return fmt.Sprint(x.JoinMessages) })
	add("bottleneck redirects", func(x PaperRun) string { return fmt.Sprint(x.Redirects) })
	if err := writeTable(w, head, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return writeTable(w, []string{"link stress, one message per group", "mean (used links)", "mean (all links)", "max", "links used"},
		[][]string{
			stressRow("Scribe, no remover", r.Runs[0].Multicast),
			stressRow(fmt.Sprintf("Scribe, remover (cap %d)", PaperCap), r.Runs[len(r.Runs)-1].Multicast),
			stressRow("IP multicast", r.IPMulticast),
			stressRow("naive unicast", r.Unicast),
		})
}

func stressRow(name string, ls LinkStress) []string {
	return []string{name, f2(ls.MeanUsed), f2(ls.MeanAll), fmt.Sprint(ls.Max), fmt.Sprint(ls.LinksUsed)}
}
