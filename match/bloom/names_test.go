package bloom

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/sift-pubsub/sift/match"
)

// TestNamesFollowTerms: the attribute numbers, the unqualified terms by
// number and the signature list follow the terms in and out, and an
// emptied dictionary holds none of them.
func TestNamesFollowTerms(t *testing.T) {
	const seed = 11
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 4))
	attrs := []string{"a", "b", "c", "d"}
	d, _ := NewDictionary(Params{})
	var live []match.Filter
	for range 400 {
		if len(live) > 0 && r.IntN(3) == 0 {
			i := r.IntN(len(live))
			if err := d.RemoveFilter(live[i]); err != nil {
				t.Fatal(err)
			}
			live = slices.Delete(live, i, i+1)
		} else {
			var cs []match.Constraint
			for range 1 + r.IntN(3) {
				op := []match.Op{match.OpEq, match.OpLt, match.OpExists}[r.IntN(3)]
				c := match.Constraint{Attr: attrs[r.IntN(len(attrs))], Op: op}
				if op != match.OpExists {
					c.Val = match.Int(r.Int64N(3))
				}
				cs = append(cs, c)
			}
			f := match.MustFilter(cs...)
			d.AddFilter(f)
			live = append(live, f)
		}
		checkNames(t, d)
	}
	for _, f := range live {
		if err := d.RemoveFilter(f); err != nil {
			t.Fatal(err)
		}
	}
	checkNames(t, d)
	if len(d.names.ids) != 0 || len(d.sigList) != 0 || slices.ContainsFunc(d.flatByID, func(at *attrTerms) bool { return at != nil }) {
		t.Fatalf("emptied dictionary still numbers %v, lists %d signatures", d.names.ids, len(d.sigList))
	}
}

// checkNames checks the numbering against the maps it mirrors.
func checkNames(t *testing.T, d *Dictionary) {
	t.Helper()
	refs := map[string]int32{}
	for name, at := range d.flat {
		refs[name]++
		if d.names.ids[name] != at.id || d.flatByID[at.id] != at {
			t.Fatalf("unqualified %s: id %d, numbered %d", name, at.id, d.names.ids[name])
		}
	}
	for _, g := range d.groups {
		if len(g.list) != len(g.attrs) {
			t.Fatalf("group %v lists %d attributes, maps %d", g.qual, len(g.list), len(g.attrs))
		}
		for _, at := range g.list {
			refs[at.attr]++
			if g.attrs[at.attr] != at || d.names.ids[at.attr] != at.id {
				t.Fatalf("group %v: %s listed but not mapped or numbered", g.qual, at.attr)
			}
		}
	}
	if len(d.sigList) != len(d.sigs) {
		t.Fatalf("%d signatures listed, %d mapped", len(d.sigList), len(d.sigs))
	}
	for _, sig := range d.sigList {
		for i, a := range sig.attrs {
			refs[a]++
			if d.names.ids[a] != sig.ids[i] {
				t.Fatalf("signature %s: %s numbered %d, want %d", sig.text, a, sig.ids[i], d.names.ids[a])
			}
		}
	}
	for name, id := range d.names.ids {
		if d.names.refs[id] != refs[name] {
			t.Fatalf("%s: %d references counted, %d held", name, d.names.refs[id], refs[name])
		}
	}
	if len(refs) != len(d.names.ids) {
		t.Fatalf("numbered %v, in use %v", d.names.ids, refs)
	}
}

// TestSummaryOfReusedNameMemory: an event whose attribute names live in
// memory its reader reuses (borrowed decoding) gets the summary of its
// own names, not of the names the memory held for the previous event.
func TestSummaryOfReusedNameMemory(t *testing.T) {
	d, _ := NewDictionary(Params{})
	aa, bb := match.MustParse(`aa == 1`), match.MustParse(`bb == 1`)
	d.AddFilter(aa)
	d.AddFilter(bb)
	buf := []byte("aa")
	name := unsafe.String(&buf[0], len(buf))
	sum := d.p.NewFilter()
	for _, want := range []match.Filter{aa, bb} {
		copy(buf, want.At(0).Attr)
		d.Summary(match.MustEvent(match.Attr{Name: name, Value: match.Int(1)}), sum)
		if !sum.Equal(d.p.Encode(want)) {
			t.Fatalf("event {%s: 1}: summary %x, want the bits of %v, %x", name, sum.Words(), want, d.p.Encode(want).Words())
		}
	}
}
