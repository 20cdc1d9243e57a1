package scribe

// neighbourSet is Pastry's neighbourhood set: the |M| known nodes nearest to
// the owner by proximity, nearest first.
type neighbourSet struct {
	size  int
	refs  []Ref
	dists []int64
}

func newNeighbourSet(size int) neighbourSet { return neighbourSet{size: size} }

// consider inserts x if it is among the size nearest known nodes.
func (m *neighbourSet) consider(x Ref, d int64) bool {
	pos := len(m.refs)
	for i, y := range m.refs {
		if y.Addr == x.Addr {
			return false
		}
		if pos == len(m.refs) && (d < m.dists[i] || d == m.dists[i] && x.Addr < y.Addr) {
			pos = i
		}
	}
	if pos >= m.size {
		return false
	}
	if len(m.refs) < m.size {
		m.refs = append(m.refs, Ref{})
		m.dists = append(m.dists, 0)
	}
	copy(m.refs[pos+1:], m.refs[pos:len(m.refs)-1])
	copy(m.dists[pos+1:], m.dists[pos:len(m.dists)-1])
	m.refs[pos], m.dists[pos] = x, d
	return true
}

// remove deletes a and reports whether it was present.
func (m *neighbourSet) remove(a Addr) bool {
	for i, y := range m.refs {
		if y.Addr == a {
			m.refs = append(m.refs[:i], m.refs[i+1:]...)
			m.dists = append(m.dists[:i], m.dists[i+1:]...)
			return true
		}
	}
	return false
}
