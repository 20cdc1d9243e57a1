package match

import "cmp"

// export returns the ids and filters of the live subscriptions, rebuilt from
// the segment's own structures (the segment keeps no copy of the filters).
// Each rebuilt filter matches exactly the events the original matched.
func (s *segment) export() ([]ID, []Filter) {
	n := len(s.ids)
	cs := make([][]Constraint, n)
	for i := range s.attrs {
		a := &s.attrs[i]
		inDim := make(map[uint32]bool)
		if a.num != nil {
			exportDim(a.name, a.num, cs, inDim, func(k float64) Value { return MustFloat(k) })
		}
		if a.num32 != nil {
			exportDim(a.name, a.num32, cs, inDim, func(k float32) Value { return MustFloat(float64(k)) })
		}
		if a.str != nil {
			exportDim(a.name, a.str, cs, inDim, Str)
		}
		if a.bool != nil {
			exportDim(a.name, a.bool, cs, inDim, func(k float64) Value { return Bool(k == 1) })
		}
		a.has.each(func(slot uint32) {
			if !inDim[slot] {
				cs[slot] = append(cs[slot], Constraint{Attr: a.name, Op: OpExists})
			}
		})
	}
	var ids []ID
	var filters []Filter
	for slot := range n {
		if s.live.Test(uint(slot)) {
			ids = append(ids, s.ids[slot])
			filters = append(filters, canonicalFilter(cs[slot]))
		}
	}
	return ids, filters
}

func exportDim[K cmp.Ordered](attr string, d *dim[K], cs [][]Constraint, inDim map[uint32]bool, val func(K) Value) {
	got := make(map[uint32]bool)
	add := func(slot uint32, op Op, k K) {
		got[slot] = true
		cs[slot] = append(cs[slot], Constraint{Attr: attr, Op: op, Val: val(k)})
	}
	defer d.has.each(func(slot uint32) {
		inDim[slot] = true
		if !got[slot] {
			// Only a string interval can lose every bound (`prefix ""`,
			// `>= ""`): keep its type with the least string.
			var least K
			add(slot, OpGe, least)
		}
	})
	for k, slots := range d.eq {
		for _, s := range slots {
			add(s, OpEq, k)
		}
	}
	for k, slots := range d.ne {
		for _, s := range slots {
			add(s, OpNe, k)
		}
	}
	for c := range d.lo {
		for i, s := range d.lo[c].slots {
			op := OpGe
			if s&openBit != 0 {
				op = OpGt
			}
			add(s&^openBit, op, d.lo[c].keys[i])
		}
		for i, s := range d.hi[c].slots {
			op := OpLe
			if s&openBit != 0 {
				op = OpLt
			}
			add(s&^openBit, op, d.hi[c].keys[i])
		}
	}
	for _, x := range d.extras {
		got[x.slot] = true
		cs[x.slot] = append(cs[x.slot], x.cs...)
	}
}
