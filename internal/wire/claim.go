package wire

import (
	"encoding/binary"
	"math"
)

// VersionClaim is the client version from which a client may send
// PlaceClaim. It changes nothing else, so a router speaks an older version
// to an older client, and a client of this version sends no claim to a
// router that did not choose it (an older router refuses the frame type).
const VersionClaim uint64 = 4

// PlaceClaim says that the client believes the filter of its subscription
// First+i is covered by the filter of its subscription Parents[i] (0: no
// claim for it), so that the router may place First+i below that parent in
// its routing table (docs/protocol.md, "Claimed placement"). The client
// sends it on the control stream right before the Subscribe of First (one
// claim) or the SubscribeBatch starting at First (one claim per filter,
// in the batch's order). The router checks each claim before using it: a
// false one costs the router its own placement, never an event. No
// subscription is claimed to be its own parent.
type PlaceClaim struct {
	First   uint64
	Parents []uint64
}

// Type returns TypePlaceClaim.
func (*PlaceClaim) Type() Type { return TypePlaceClaim }

// AppendBody appends first, the count and the parents.
func (m *PlaceClaim) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.First)
	b = binary.AppendUvarint(b, uint64(len(m.Parents)))
	for _, p := range m.Parents {
		b = binary.AppendUvarint(b, p)
	}
	return b
}

func decodePlaceClaim(r *reader) *PlaceClaim {
	m := &PlaceClaim{First: r.uvarint("place claim first")}
	n := r.count("place claim parents", 1)
	switch {
	case r.err != nil:
		return m
	case n == 0 || n > MaxBatchFilters:
		r.fail("place claim: %d parents (want 1-%d)", n, MaxBatchFilters)
		return m
	case m.First > math.MaxUint64-uint64(n-1):
		r.fail("place claim: subscriptions %d + %d overflow", m.First, n)
		return m
	}
	m.Parents = make([]uint64, n)
	for i := range m.Parents {
		m.Parents[i] = r.uvarint("place claim parent")
		if r.err == nil && m.Parents[i] == m.First+uint64(i) {
			r.fail("place claim: subscription %d claimed to be its own parent", m.Parents[i])
		}
		if r.err != nil {
			return m
		}
	}
	return m
}
