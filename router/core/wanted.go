package core

import (
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
)

// Wanted attribute names. A router forwards and delivers the raw bytes of
// an event, so its readers need to decode only the attributes that
// something it matches events against names: the filters of its engine
// and of its link table and, in Bloom mode, the terms of its dictionary.
// The core notes every name the first time one of them names it and hands
// the new names over as Ready.Wanted; the driver adds them to the set its
// readers decode with (and decodes again a batch decoded under an older
// set) before it carries out anything else of the Ready.

// noteFilter notes the attribute names of a filter the engine or the link
// table installs (their OnFilter hook, called inside the core's Step).
func (c *Core) noteFilter(f match.Filter) {
	for i := range f.Len() {
		c.noteName(f.At(i).Attr)
	}
}

// noteTerm notes the names of a term that enters the Bloom dictionary:
// its constraint's and its qualifier's.
func (c *Core) noteTerm(t bloom.Term) {
	c.noteFilter(t.Qual)
	c.noteName(t.C.Attr)
}

func (c *Core) noteName(name string) {
	if _, ok := c.named[name]; ok {
		return
	}
	c.named[name] = struct{}{}
	c.rd.Wanted = append(c.rd.Wanted, name)
}
