package durable

import (
	"container/heap"
	"slices"
	"strings"
)

// Which catch-up sessions an input steps. A session's step (stepCatchup)
// does something only when an input gave it something to act on or one
// of its timers fell due; every other session's step is a no-op. progress
// therefore steps only:
//
//   - the sessions an input changed (markDirty): one that started
//     catching up, was offered an event it waits for (offerCatchups),
//     had events acknowledged (room in its queue), met a new L prefix
//     (lost), or got a PFS record as the constream passed a tick it
//     matches (deliver): it reads the record once it holds less than a
//     window. A session LD passed without a record of its own has
//     nothing new to read, and it holds pending ticks (with none it would
//     have joined), so its step would change nothing but how far it read;
//   - the sessions in a remote phase (shbPubend.remotes, a few): every
//     knowledge message may extend what they know;
//   - the sessions whose timer is due (wakes): the end of the hold of
//     their first nack (held), or the earliest time a nack of their
//     window is due again or a cover holding some of it expires
//     (catchup.nextDue).
//
// What one session's step changes that another's may read (the shared
// nack state shbPubend.fetch, the covers, the stats) is read by the other
// only once its own step passes the checks above, so a session left out
// stays a no-op whatever the others did. The sessions stepped are
// stepped in subscription id order, as progress stepped all of them
// before, so the outputs are the same, message for message: the
// differential test runs a reference SHB (SHB.stepAll) beside each one
// and compares every Ready. The work per input is the changed sessions',
// no longer one step per catching session.

// wake is a session's timer: it is stepped at the first input at or after
// at, if at is still its wakeAt (a later step may have moved it).
type wake struct {
	at Tick
	c  *conn
}

// wakeHeap is a min-heap of wakes by time (container/heap).
type wakeHeap []wake

func (h wakeHeap) Len() int           { return len(h) }
func (h wakeHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h wakeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *wakeHeap) Push(x any)        { *h = append(*h, x.(wake)) }
func (h *wakeHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	*h = old[:len(old)-1]
	return w
}

// markDirty has progress step c's catch-up streams after this input.
func (s *SHB) markDirty(c *conn) {
	if !c.dirty {
		c.dirty = true
		s.dirty = append(s.dirty, c)
	}
}

// markAllDirty has progress step every catching session (an L prefix
// moved: each may owe a gap).
func (s *SHB) markAllDirty() {
	for _, c := range s.catchingConns() {
		s.markDirty(c)
	}
}

// toStep returns the catching sessions progress steps now, in
// subscription id order: every one for the reference (stepAll), else the
// dirty ones, those of the pubends' remotes and those whose wake is due.
func (s *SHB) toStep() []*conn {
	if s.stepAll {
		s.clearDirty()
		return slices.Clone(s.catchingConns())
	}
	for _, p := range s.cfg.Pubends {
		for c := range s.pubs[p].remotes {
			s.markDirty(c)
		}
	}
	for len(s.wakes) > 0 && s.wakes[0].at <= s.now {
		w := heap.Pop(&s.wakes).(wake)
		if w.c.wakeAt == w.at {
			w.c.wakeAt = MaxTick
			s.markDirty(w.c)
		}
	}
	todo := s.stepBuf[:0]
	for _, c := range s.dirty {
		c.dirty = false
		if _, ok := s.catching[c]; ok {
			todo = append(todo, c)
		}
	}
	clear(s.dirty)
	s.dirty = s.dirty[:0]
	slices.SortFunc(todo, func(a, b *conn) int { return strings.Compare(a.sub.id, b.sub.id) })
	s.stepBuf = todo
	return todo
}

// clearDirty forgets the sessions marked dirty.
func (s *SHB) clearDirty() {
	for _, c := range s.dirty {
		c.dirty = false
	}
	clear(s.dirty)
	s.dirty = s.dirty[:0]
}

// stepCatchups steps the sessions of toStep on every pubend, notes when
// each must be stepped again, and removes from catching those caught up.
func (s *SHB) stepCatchups() error {
	var done []*conn
	for _, c := range s.toStep() {
		s.Stats.CatchupSteps++
		for _, p := range s.cfg.Pubends {
			if err := s.stepCatchup(c, p); err != nil {
				return err
			}
		}
		s.schedule(c)
		if s.caughtUp(c) {
			done = append(done, c)
		}
	}
	for _, c := range done {
		s.removeCatching(c)
	}
	return nil
}

// schedule sets, after a step of c, when it must be stepped again if no
// input changes it first: its earliest timer over its catch-up streams.
func (s *SHB) schedule(c *conn) {
	at := MaxTick
	for _, p := range s.cfg.Pubends {
		if cu := c.streams[p].catchup; cu != nil {
			at = min(at, s.wakeOf(cu))
		}
	}
	if at == c.wakeAt {
		return
	}
	c.wakeAt = at
	if at < MaxTick {
		heap.Push(&s.wakes, wake{at: at, c: c})
		s.compactWakes()
	}
}

// wakeOf returns when a catch-up stream's step next has something to do
// of its own accord: the end of its first nack's hold while held, else
// nextDue (MaxTick: only an input wakes it).
func (s *SHB) wakeOf(cu *catchup) Tick {
	if cu.holding {
		return min(s.lastOpen+s.cfg.NackDelay, cu.openedAt+s.cfg.NackRetry)
	}
	return cu.nextDue
}

// compactWakes drops the wakes superseded by later steps once they
// outnumber the live ones, so the heap stays the size of the sessions.
func (s *SHB) compactWakes() {
	if len(s.wakes) <= 64+4*len(s.catching) {
		return
	}
	live := s.wakes[:0]
	for _, w := range s.wakes {
		if _, ok := s.catching[w.c]; ok && w.c.wakeAt == w.at {
			live = append(live, w)
		}
	}
	clear(s.wakes[len(live):])
	s.wakes = live
	heap.Init(&s.wakes)
}
