package mesh

import (
	"fmt"
	"slices"
)

// Link epochs order links by age, so that when links close a cycle the
// newest of the cycle is the one that goes and no older link is touched
// (docs/protocol.md, "Link epochs").
//
// Every router keeps a link clock, the largest epoch it has seen (in a
// hello or a Reach). The accepting router gives a new link the epoch
// nextEpoch(max(its clock, the dialler's)) and sends it in its answer
// hello, so both ends hold the same value, and it is larger than the epoch
// of every link either end knew of. Reach carries, per router name, the
// epoch of the newest link on the path to it, so every router of a tree
// learns the epochs of its links and its clock stays above them: a link
// made later is newer than every link that was up and settled before it.
//
// An epoch is a Lamport counter above epochTieBits bits drawn from the
// accepting router's incarnation, so that two links made concurrently
// with the same counter (a router joining two others at once) are still
// ordered; both ends of a cycle's newest link then see it as the newest.

// epochTieBits is the width of an epoch's tie-break.
const epochTieBits = 24

// MaxEpoch bounds the epochs and clocks a peer may send: 2^38 links made
// one after another are beyond any mesh, and a value near 2^64 would make
// the next epoch wrap around to look older than every link.
const MaxEpoch = 1 << 62

// checkEpochs refuses an epoch above MaxEpoch.
func checkEpochs(what string, es ...uint64) error {
	for _, e := range es {
		if e > MaxEpoch {
			return fmt.Errorf("%s: epoch %#x above the maximum %#x", what, e, uint64(MaxEpoch))
		}
	}
	return nil
}

// nextEpoch returns a new link's epoch: the counter above clock's, with a
// tie-break that depends on this router's incarnation and the link count.
func (m *Mesh) nextEpoch(clock uint64) uint64 {
	tie := splitmix(m.incarn ^ uint64(m.nextLink+1)*0x9e3779b97f4a7c15)
	return ((clock>>epochTieBits)+1)<<epochTieBits | tie&(1<<epochTieBits-1)
}

// splitmix is SplitMix64's output function: a fixed bijective mix.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// see advances the link clock past epochs.
func (m *Mesh) see(epochs ...uint64) {
	for _, e := range epochs {
		m.clock = max(m.clock, e)
	}
}

// epochs returns es, or zeros when it is nil (a peer from before epochs),
// one per name.
func epochsFor(es []uint64, n int) []uint64 {
	if len(es) == n {
		return slices.Clone(es)
	}
	return make([]uint64, n)
}

// pathEpoch is the epoch of the newest link on the path from this router
// to the i-th name l reaches: l itself or one beyond it.
func (l *link) pathEpoch(i int) uint64 { return max(l.epoch, l.reachEp[i]) }

// doomed is a link that is the newest of a cycle, with the cycle.
type doomed struct {
	l   *link
	why string
}

// newestOfCycles returns, in the order of ls, the links of ls that are the
// newest link of some cycle seen through them: ls[i] reaches this router,
// or reaches a router another link of ls also reaches, and no link on
// that cycle (as far as the epochs along both paths say) is newer. A cycle
// is judged by the newest link on it; where several routers are reachable
// both ways, the least such epoch is the cycle's (the others add paths
// beyond the point where the two ways meet). Routers on a cycle whose
// newest link is not theirs close nothing: that link's two ends, which see
// the same epochs, close it.
func (m *Mesh) newestOfCycles(ls []*link) []doomed {
	var out []doomed
	for _, o := range ls {
		best, why := uint64(0), ""
		found := false
		if i, ok := slices.BinarySearch(o.reach, m.name); ok {
			best, found = o.pathEpoch(i), true
			why = fmt.Sprintf("%s reaches this router (%s) without this link", o.peer, m.name)
		}
		for _, q := range ls {
			if q == o {
				continue
			}
			for i, j := 0, 0; i < len(o.reach) && j < len(q.reach); {
				switch {
				case o.reach[i] < q.reach[j]:
					i++
				case o.reach[i] > q.reach[j]:
					j++
				default:
					if v := max(o.pathEpoch(i), q.pathEpoch(j)); !found || v < best {
						best, found = v, true
						why = fmt.Sprintf("%s is reachable through %s and through %s", o.reach[i], o.peer, q.peer)
					}
					i++
					j++
				}
			}
		}
		if found && best == o.epoch {
			out = append(out, doomed{o, fmt.Sprintf("%s, and the link %s-%s (epoch %#x) is the newest of that cycle", why, m.name, o.peer, o.epoch)})
		}
	}
	return out
}
