package match

// spreadInto moves every subscription of x into dst[pick(id)] (indexes
// holding none of x's ids), rebuilding x's segments one destination at a
// time from their indexed form, and leaves x empty. Parallel uses it to
// spread one index over its shards once it has grown large enough, and to
// gather a small load into one.
func (x *Fast) spreadInto(dst []*Fast, pick func(ID) int) {
	for i, d := range dst {
		b := newSegBuilder()
		for _, s := range x.segs {
			b.addSegmentWhere(s, func(id ID) bool { return pick(id) == i })
		}
		if len(b.ids) > 0 {
			d.addSegment(b.build(&d.cfg))
		}
	}
	for id := range x.never {
		dst[pick(id)].setNever(id)
	}
	for _, t := range x.tail {
		d := dst[pick(t.id)]
		d.loc.set(t.id, loc(0, uint32(len(d.tail))))
		d.tail = append(d.tail, t)
	}
	for _, d := range dst {
		if len(d.tail) >= d.cfg.TailSize {
			d.flushTail()
		}
	}
	*x = *NewFast(x.user)
}
