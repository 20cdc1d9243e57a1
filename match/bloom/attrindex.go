package bloom

import (
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// ordered lists the operators kept in chains, in chain-array order.
var ordered = [...]match.Op{match.OpEq, match.OpNe, match.OpLt, match.OpLe, match.OpGt, match.OpGe}

const numClasses = 3 // string, number, bool

// classOf maps a value kind to its comparison class (-1 for invalid).
func classOf(k match.Kind) int {
	switch k {
	case match.KindString:
		return 0
	case match.KindInt, match.KindFloat:
		return 1
	case match.KindBool:
		return 2
	}
	return -1
}

// attrIndex answers, for one attribute (and one qualifier, if any), which
// terms an event value satisfies, as the union of their bits. It is built
// once from the terms and rebuilt when they change.
type attrIndex struct {
	exists   []uint64 // union of the `exists` terms (nil: none)
	chains   [numClasses][len(ordered)]*chain
	prefix   literals                    // prefix literals
	suffix   literals                    // suffix literals
	contains map[int]map[string][]uint32 // literal length -> literal -> positions
}

// literals are the prefix (or suffix) literals of an attribute's terms,
// with their lengths, so that a value is cut only at those lengths.
type literals struct {
	byText map[string][]uint32 // literal -> positions
	lens   []int               // distinct literal lengths, increasing
}

// newAttrIndex builds the index of the terms on one attribute; positions
// gives each constraint's bit positions.
func newAttrIndex(p Params, cs []match.Constraint, positions func(match.Constraint) []uint32) *attrIndex {
	ix := &attrIndex{}
	var entries [numClasses][len(ordered)][]chainEntry
	for _, c := range cs {
		pos := positions(c)
		switch c.Op {
		case match.OpExists:
			if ix.exists == nil {
				ix.exists = make([]uint64, p.words())
			}
			setPositions(ix.exists, pos)
		case match.OpPrefix:
			ix.prefix.add(c.Val.AsString(), pos)
		case match.OpSuffix:
			ix.suffix.add(c.Val.AsString(), pos)
		case match.OpContains:
			ix.addContains(c.Val.AsString(), pos)
		default:
			o := opSlot(c.Op)
			cl := classOf(c.Val.Kind())
			entries[cl][o] = append(entries[cl][o], chainEntry{val: c.Val, pos: pos})
		}
	}
	for cl := range entries {
		for o, es := range entries[cl] {
			if len(es) > 0 {
				ch := newChain(es, int(p.K), p.words())
				if (ordered[o] == match.OpEq || ordered[o] == match.OpNe) && len(es) >= eqMapMin {
					ch.hashValues()
				}
				ix.chains[cl][o] = ch
			}
		}
	}
	return ix
}

func opSlot(op match.Op) int {
	for i, o := range ordered {
		if o == op {
			return i
		}
	}
	panic("bloom: operator " + op.String() + " has no chain")
}

func (ls *literals) add(lit string, pos []uint32) {
	if i, found := slices.BinarySearch(ls.lens, len(lit)); !found {
		ls.lens = slices.Insert(ls.lens, i, len(lit))
	}
	ls.byText = addLiteral(ls.byText, lit, pos)
}

func addLiteral(m map[string][]uint32, lit string, pos []uint32) map[string][]uint32 {
	if m == nil {
		m = make(map[string][]uint32)
	}
	m[lit] = append(m[lit], pos...)
	return m
}

func (ix *attrIndex) addContains(lit string, pos []uint32) {
	if ix.contains == nil {
		ix.contains = make(map[int]map[string][]uint32)
	}
	ix.contains[len(lit)] = addLiteral(ix.contains[len(lit)], lit, pos)
}

// or sets in dst the bits of every term this event value satisfies.
func (ix *attrIndex) or(dst []uint64, v match.Value) {
	orWords(dst, ix.exists)
	cl := classOf(v.Kind())
	for o, ch := range ix.chains[cl] {
		if ch != nil {
			ch.or(dst, ordered[o], v)
		}
	}
	if v.Kind() != match.KindString {
		return
	}
	s := v.AsString()
	for _, l := range ix.prefix.lens {
		if l > len(s) {
			break
		}
		setPositions(dst, ix.prefix.byText[s[:l]])
	}
	for _, l := range ix.suffix.lens {
		if l > len(s) {
			break
		}
		setPositions(dst, ix.suffix.byText[s[len(s)-l:]])
	}
	for l, lits := range ix.contains {
		for i := 0; i+l <= len(s); i++ {
			setPositions(dst, lits[s[i:i+l]])
		}
	}
}
