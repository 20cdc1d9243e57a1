package bloom

// Sources is the multiset of subscription sources stored at a tree leaf:
// each source (a subscription id, or a router interface) with the number
// of stored filters it contributed there, so that delete works when one
// source stores the same Bloom filter several times.
type Sources struct {
	ids    []uint64
	counts []uint32
}

// Add adds one reference to src.
func (s *Sources) Add(src uint64) {
	for i, id := range s.ids {
		if id == src {
			s.counts[i]++
			return
		}
	}
	s.ids = append(s.ids, src)
	s.counts = append(s.counts, 1)
}

// Remove drops one reference to src, and reports false when src is absent.
func (s *Sources) Remove(src uint64) bool {
	for i, id := range s.ids {
		if id != src {
			continue
		}
		if s.counts[i]--; s.counts[i] == 0 {
			last := len(s.ids) - 1
			s.ids[i], s.counts[i] = s.ids[last], s.counts[last]
			s.ids, s.counts = s.ids[:last], s.counts[:last]
		}
		return true
	}
	return false
}

// Len returns the number of distinct sources.
func (s *Sources) Len() int { return len(s.ids) }

// AppendTo appends each distinct source once to dst.
func (s *Sources) AppendTo(dst []uint64) []uint64 { return append(dst, s.ids...) }
