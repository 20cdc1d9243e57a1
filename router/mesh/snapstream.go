package mesh

import (
	"math"
	"slices"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// The snapshot a link gets when it comes up is streamed: sent in parts of
// at most Config.SnapshotPart bytes of filter text, with at most
// Config.SnapshotWindow parts unacknowledged. The first part is a Routes
// with Snapshot set, the others are ordinary Routes that only add; the
// receiver's link session is new, so holding the first part and adding
// the others is holding the whole snapshot, and the receiver, the link
// table and the Bloom mirror need nothing new. Why: one Routes of a
// forwarding set of 10^6 filters is ~50 MB, far above the frame limit a
// receiver reads control streams with (wire.DefaultMaxFrame), and would be
// built, sent and parsed in one piece; in parts, a receiver holds one
// part at a time, and since a part is acknowledged only once the routers
// behind the receiver have installed it, the window paces the stream to
// what the whole path installs.
//
// While the stream runs the link's forwarding set may change: additions
// go out at once as usual; the removal of a filter not streamed yet
// withdraws it from the stream instead of being sent (the peer never held
// it). Whatever waits for the link (a client's Ready, a RoutesAck owed to
// another link) waits for the end of the stream, since what covered it
// there may be in a part not sent yet.

// Defaults of Config.SnapshotPart and Config.SnapshotWindow.
const (
	DefaultSnapshotPart   = 256 << 10
	DefaultSnapshotWindow = 4
)

// maxSnapshotPart bounds Config.SnapshotPart: a part must fit a frame the
// default receiver reads, with room for the message's own fields.
const maxSnapshotPart = wire.DefaultMaxFrame / 2

// streamEnd is the seq a waiter on a streaming link waits for until the
// last part is sent (endStream replaces it by that part's seq).
const streamEnd = math.MaxUint64

// snapStream is the part of a link's snapshot not sent yet.
type snapStream struct {
	rest  []match.Filter // the snapshot, in canonical order
	cut   []bool         // rest[i] was withdrawn before being sent
	next  int            // rest[:next] is sent
	parts []uint64       // seqs of the parts sent, not acknowledged yet
	first bool           // no part sent yet
}

// startSnapshot begins streaming fs, the filters the link is to hold, and
// sends the first parts.
func (m *Mesh) startSnapshot(l *link, fs []match.Filter, out *Output) {
	fs = slices.Clone(fs)
	slices.SortFunc(fs, match.Filter.Compare)
	l.stream = &snapStream{rest: fs, cut: make([]bool, len(fs)), first: true}
	m.pump(l, out)
}

// pump sends the link's next snapshot parts, as far as the window allows,
// and ends the stream once everything is sent.
func (m *Mesh) pump(l *link, out *Output) {
	s := l.stream
	if s == nil {
		return
	}
	i := 0
	for i < len(s.parts) && s.parts[i] <= l.ackedSeq {
		i++
	}
	s.parts = s.parts[i:]
	for len(s.parts) < m.snapWindow && (s.first || s.next < len(s.rest)) {
		r := &wire.Routes{Gen: uint64(l.id), Snapshot: s.first, Add: []string{}}
		size := 0
		for s.next < len(s.rest) && size < m.snapPart {
			if !s.cut[s.next] {
				t := s.rest[s.next].String()
				r.Add = append(r.Add, t)
				size += len(t) + 3 // the text and its length
			}
			s.next++
		}
		if len(r.Add) == 0 && !s.first {
			break // only withdrawn filters were left
		}
		s.first = false
		l.sentSeq++
		r.Seq = l.sentSeq
		out.send(l.id, r)
		s.parts = append(s.parts, l.sentSeq)
	}
	if !s.first && s.next == len(s.rest) {
		m.endStream(l, out)
	}
}

// endStream forgets the link's stream: everything is sent, so what waited
// for its end waits for the last seq sent. When the stream ends without a
// part of its own (only withdrawn filters were left) that seq may be
// acknowledged already, by the acknowledgement whose window move ran this
// pump: what waited is then released here, as no later acknowledgement
// may come.
func (m *Mesh) endStream(l *link, out *Output) {
	l.stream = nil
	q := m.acks.waiting[l.id]
	for i := len(q) - 1; i >= 0 && q[i].seq == streamEnd; i-- {
		q[i].seq = l.sentSeq
	}
	if l.ackedSeq >= l.sentSeq {
		m.acked(l, out)
	}
}

// withdraw takes up to n copies of f out of the part of the stream not
// sent yet and returns how many it took (the rest were sent already, and
// are removed from the peer as usual).
func (s *snapStream) withdraw(f match.Filter, n int) int {
	rest := s.rest[s.next:]
	i, _ := slices.BinarySearchFunc(rest, f, match.Filter.Compare)
	took := 0
	for ; took < n && i < len(rest) && rest[i].Compare(f) == 0; i++ {
		if !s.cut[s.next+i] {
			s.cut[s.next+i] = true
			took++
		}
	}
	return took
}

// Streaming reports whether link id is still streaming its snapshot (for
// tests and metrics).
func (m *Mesh) Streaming(id Link) bool {
	l := m.links[id]
	return l != nil && l.stream != nil
}
