package durable

import (
	"fmt"
	"slices"
)

// AddPubend makes the SHB receive pubend p from now on (a pubend learned
// at run time, see Directory); the SHB remembers it across restarts.
// Subscriptions registered before start on p at tick 0: they hold p's
// release from its first tick, so they are sent every event of p that is
// not released by the time this SHB reports (the pubend learns this SHB
// from its reports and installs, and a gap covers only what it had
// released before). Sessions open now start there too.
func (s *SHB) AddPubend(p string) error {
	if _, ok := s.pubs[p]; ok {
		return nil
	}
	if p == "" {
		return fmt.Errorf("shb %s: empty pubend name", s.cfg.Node)
	}
	bySID := map[uint64]*durableSub{}
	for _, d := range s.subs {
		bySID[d.sid] = d
	}
	if err := s.recoverPubend(p, bySID); err != nil {
		return fmt.Errorf("shb %s: add pubend %s: %w", s.cfg.Node, p, err)
	}
	s.cfg.Pubends = append(s.cfg.Pubends, p)
	slices.Sort(s.cfg.Pubends)
	s.w.set(shbPubendKey(p), encodeTicks(0))
	for _, d := range s.sortedSubs() {
		if _, ok := d.released[p]; !ok {
			s.setReleased(d, p, 0)
		}
	}
	for _, c := range s.sortedConns() {
		if _, ok := c.streams[p]; !ok {
			c.streams[p] = &connStream{}
		}
	}
	return s.checkInvariants()
}

// Pubends returns the pubends the SHB receives, sorted.
func (s *SHB) Pubends() []string { return slices.Clone(s.cfg.Pubends) }
