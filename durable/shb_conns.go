package durable

import (
	"fmt"
	"slices"
	"strings"
)

// The SHB's sessions (conns) change only through setConn and dropConn,
// which keep two views of them: connOrder, the sessions in subscriber id
// order (sortedConns), and per pubend the set of sessions whose catch-up
// stream is in its remote phase (shbPubend.remotes), so that knowledge is
// offered only to the few sessions fetching ticks from upstream rather than
// to every session. A remote phase starts only when a session opens (open)
// and ends when it has conveyed every tick it fetches (endRemote) or when
// its session goes.

// sortedConns returns the connections in subscriber id order. The slice
// is shared until conns changes: callers only read it.
func (s *SHB) sortedConns() []*conn {
	if s.connOrder == nil {
		s.connOrder = make([]*conn, 0, len(s.conns))
		for _, id := range slices.Sorted(mapKeys(s.conns)) {
			s.connOrder = append(s.connOrder, s.conns[id])
		}
	}
	return s.connOrder
}

// setConn makes c the session of subscriber id, replacing any other, and
// enters it in the remotes of the pubends where its catch-up starts with a
// remote phase.
func (s *SHB) setConn(id string, c *conn) {
	s.dropConn(id)
	s.conns[id], s.connOrder = c, nil
	for p, cs := range c.streams {
		if cs.catchup != nil {
			s.addCatching(c)
			if cs.catchup.remote != nil {
				s.pubs[p].remotes[c] = struct{}{}
			}
		}
	}
}

// startCatchup moves c's stream cs to catch-up stream cu.
func (s *SHB) startCatchup(c *conn, cs *connStream, cu *catchup) {
	cs.catchup = cu
	s.addCatching(c)
	s.markDirty(c)
}

// caughtUp reports whether no stream of c catches up any more.
func (s *SHB) caughtUp(c *conn) bool {
	for _, cs := range c.streams {
		if cs.catchup != nil {
			return false
		}
	}
	return true
}

// addCatching and removeCatching keep catching and catchOrder (sorted by
// subscription id) in step: one binary search and one insertion or
// deletion per change, never a sort.
func (s *SHB) addCatching(c *conn) {
	if _, ok := s.catching[c]; ok {
		return
	}
	s.catching[c] = struct{}{}
	s.catchGen++
	s.markDirty(c)
	i, _ := slices.BinarySearchFunc(s.catchOrder, c.sub.id, func(x *conn, id string) int { return strings.Compare(x.sub.id, id) })
	s.catchOrder = slices.Insert(s.catchOrder, i, c)
}

func (s *SHB) removeCatching(c *conn) {
	if _, ok := s.catching[c]; !ok {
		return
	}
	delete(s.catching, c)
	i, _ := slices.BinarySearchFunc(s.catchOrder, c.sub.id, func(x *conn, id string) int { return strings.Compare(x.sub.id, id) })
	if i < len(s.catchOrder) && s.catchOrder[i] == c {
		s.catchOrder = slices.Delete(s.catchOrder, i, i+1)
	}
}

// catchingConns returns the sessions in catching, sorted by subscription
// id. It is the live slice: a caller that ranges over it must not add or
// remove sessions meanwhile (progress defers its removals).
func (s *SHB) catchingConns() []*conn { return s.catchOrder }

// dropConn ends the session of subscriber id, if any.
func (s *SHB) dropConn(id string) {
	c, ok := s.conns[id]
	if !ok {
		return
	}
	for p := range c.streams {
		delete(s.pubs[p].remotes, c)
	}
	s.removeCatching(c)
	delete(s.conns, id)
	s.connOrder = nil
}

// endRemote ends the remote phase of c's catch-up stream on pubend p.
func (s *SHB) endRemote(c *conn, p string) {
	c.streams[p].catchup.remote = nil
	delete(s.pubs[p].remotes, c)
}

// checkInvariants checks the SHB's derived state in builds with the
// invariants tag (see invariants_on.go); otherwise it returns nil at once.
func (s *SHB) checkInvariants() error {
	if !invariants {
		return nil
	}
	if err := s.checkRemotes(); err != nil {
		return fmt.Errorf("invariant broken: %w", err)
	}
	for _, c := range s.conns {
		for p, cs := range c.streams {
			if _, ok := s.catching[c]; cs.catchup != nil && !ok {
				return fmt.Errorf("invariant broken: session of %s catches up on %s and is not in catching", c.sub.id, p)
			}
		}
	}
	if len(s.catchOrder) != len(s.catching) || !slices.IsSortedFunc(s.catchOrder, func(a, b *conn) int { return strings.Compare(a.sub.id, b.sub.id) }) {
		return fmt.Errorf("invariant broken: catchOrder holds %d sessions (sorted: %v), catching %d", len(s.catchOrder),
			slices.IsSortedFunc(s.catchOrder, func(a, b *conn) int { return strings.Compare(a.sub.id, b.sub.id) }), len(s.catching))
	}
	if len(s.bySID) != len(s.subs) || s.index.Len() != len(s.subs) {
		return fmt.Errorf("invariant broken: %d registrations, %d by sid, %d in the index", len(s.subs), len(s.bySID), s.index.Len())
	}
	return nil
}

// checkRemotes reports whether every pubend's remotes holds exactly the
// sessions with a remote phase on it (for tests and invariant builds).
func (s *SHB) checkRemotes() error {
	for _, p := range s.cfg.Pubends {
		pb := s.pubs[p]
		n := 0
		for _, c := range s.conns {
			cu := c.streams[p].catchup
			if cu == nil || cu.remote == nil {
				continue
			}
			n++
			if _, ok := pb.remotes[c]; !ok {
				return fmt.Errorf("pubend %s: session of %s in a remote phase is not in remotes", p, c.sub.id)
			}
		}
		if n != len(pb.remotes) {
			return fmt.Errorf("pubend %s: remotes holds %d sessions, %d are in a remote phase", p, len(pb.remotes), n)
		}
	}
	return nil
}
