package sim

import "fmt"

// Add adds the counts of o to s (EndTime takes the later one).
func (s *Stats) Add(o Stats) {
	s.Published += o.Published
	s.Delivered += o.Delivered
	s.Gaps += o.Gaps
	s.Dropped += o.Dropped
	s.Duplicated += o.Duplicated
	s.Crashes += o.Crashes
	s.Partitions += o.Partitions
	s.Blocks += o.Blocks
	s.Wipes += o.Wipes
	s.FullDisks += o.FullDisks
	s.Outages += o.Outages
	s.Joins += o.Joins
	s.MemberChanges += o.MemberChanges
	s.Reconnects += o.Reconnects
	s.ClockSteps += o.ClockSteps
	s.Roams += o.Roams
	s.ClaimDrops += o.ClaimDrops
	s.PublisherCuts += o.PublisherCuts
	s.NacksFromBelow += o.NacksFromBelow
	s.NacksUpstream += o.NacksUpstream
	s.CatchupNacks += o.CatchupNacks
	s.RemoteNacks += o.RemoteNacks
	s.Overflows += o.Overflows
	s.PFSRecords += o.PFSRecords
	s.SHBDrops += o.SHBDrops
	s.StaleIgnored += o.StaleIgnored
	s.LeaderChanges += o.LeaderChanges
	s.Wipes += o.Wipes
	s.Snapshots += o.Snapshots
	s.EarlyApplies += o.EarlyApplies
	s.Pipelined += o.Pipelined
	s.Preferred += o.Preferred
	s.EndTime = max(s.EndTime, o.EndTime)
}

// Summary renders the counts on one line of name=value pairs.
func (s Stats) Summary() string {
	return fmt.Sprintf("published=%d delivered=%d gaps=%d crashes=%d partitions=%d reconnects=%d roams=%d claim-drops=%d "+
		"publisher-cuts=%d dropped=%d duplicated=%d nacks-from-below=%d nacks-upstream=%d catchup-nacks=%d "+
		"remote-nacks=%d overflows=%d stale-silences=%d shb-drops=%d clock-steps=%d blocks=%d wipes=%d leader-changes=%d snapshots=%d full-disks=%d outages=%d joins=%d member-changes=%d early-applies=%d pipelined=%d preferred-transfers=%d",
		s.Published, s.Delivered, s.Gaps, s.Crashes, s.Partitions, s.Reconnects, s.Roams, s.ClaimDrops,
		s.PublisherCuts, s.Dropped, s.Duplicated, s.NacksFromBelow, s.NacksUpstream, s.CatchupNacks,
		s.RemoteNacks, s.Overflows, s.StaleIgnored, s.SHBDrops, s.ClockSteps, s.Blocks, s.Wipes, s.LeaderChanges, s.Snapshots, s.FullDisks, s.Outages, s.Joins, s.MemberChanges, s.EarlyApplies, s.Pipelined, s.Preferred)
}
