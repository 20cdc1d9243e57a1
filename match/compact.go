package match

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Compact returns a copy of f that holds on to no string it shares with
// anything else: attribute names are interned (the process holds one copy
// of each name however many filters use it, up to maxInterned names; later
// names are copied) and string values are copied, in a constraint slice of
// exactly f's length.
//
// Why: Parse returns constraints whose names and values are substrings of
// the text it read, so a filter kept for long (a router's subscription)
// keeps its whole wire text alive, and the parser's slice has the spare
// capacity of append. A long-lived filter held by many structures should
// be compacted once, where it enters.
func Compact(f Filter) Filter {
	if len(f.cs) == 0 {
		return f
	}
	cs := slices.Clone(f.cs)
	for i := range cs {
		cs[i].Attr = internAttr(cs[i].Attr)
		if cs[i].Val.kind == KindString {
			cs[i].Val.str = strings.Clone(cs[i].Val.str)
		}
	}
	return Filter{cs: cs}
}

// ParseCompact is Parse followed by Compact.
func ParseCompact(text string) (Filter, error) {
	f, err := Parse(text)
	if err != nil {
		return Filter{}, err
	}
	return Compact(f), nil
}

// maxInterned bounds the attribute names interned for the life of the
// process, so that clients sending ever new names cannot grow it without
// bound (past it names are copied, as values are).
const maxInterned = 1 << 14

var (
	interned  sync.Map // attribute name -> its one copy
	internedN atomic.Int64
)

// internAttr returns the process's copy of attribute name a.
func internAttr(a string) string {
	if v, ok := interned.Load(a); ok {
		return v.(string)
	}
	c := strings.Clone(a)
	if internedN.Load() >= maxInterned {
		return c
	}
	v, loaded := interned.LoadOrStore(c, c)
	if !loaded {
		internedN.Add(1)
	}
	return v.(string)
}
