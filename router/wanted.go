package router

import (
	"maps"
	"slices"
	"sync/atomic"

	"github.com/sift-pubsub/sift/internal/wire"
)

// Selective decoding. A router forwards and delivers the raw bytes of an
// event, so it needs as values only the attributes that something it
// matches events against names: the filters of its index and of its link
// table. The matching loop keeps that set of names and publishes it as an
// immutable snapshot; the data readers decode each Publish batch keeping
// only the snapshot's names (wire.EventDecoder.Wanted), which still
// validates everything, and record the snapshot's version in the loop
// message. The set only grows while the router runs, so a batch decoded
// under the loop's current version has every name the loop's filters use;
// a batch decoded under an older version is decoded again, from its raw
// bytes, with the current set before it is matched (wantedNames.refresh).
// A subscription with a new attribute name therefore never races with
// events decoded before it arrived.
//
// Bloom mode summarizes events on the constraint dictionary, which links
// extend with terms of their own: every term that enters the dictionary
// adds its names (router/core reports them) before any later summary
// tests it, and the
// last router's delivery decodes with the same set. Advertisements check
// events against advertised filters, so with them the set is "all" from
// the start (full decoding). Past maxWantedNames names it becomes "all"
// too.

// maxWantedNames bounds the wanted set; beyond it readers decode in full
// (a lookup per attribute would then cost more than it saves).
const maxWantedNames = 256

// wantedSnapshot is one published version of the wanted set. Version 0 is
// never published: it marks a batch decoded in full.
type wantedSnapshot struct {
	version uint64
	set     *wire.Wanted // nil: all names
}

// wantedNames is the matching loop's set of wanted names. Only the loop
// calls its methods, except load, which any reader calls.
type wantedNames struct {
	cur     atomic.Pointer[wantedSnapshot] // nil until started: decode in full
	names   map[string]struct{}
	started bool
	all     bool
}

// start publishes the first version: empty, or all names when all.
func (w *wantedNames) start(all bool) {
	w.started, w.all = true, all
	w.names = make(map[string]struct{})
	w.publish()
}

// load returns the set a reader decodes with (nil: all names) and its
// version (0 when the loop has not started: the reader decodes in full).
func (w *wantedNames) load() (*wire.Wanted, uint64) {
	s := w.cur.Load()
	if s == nil {
		return nil, 0
	}
	return s.set, s.version
}

// add adds names the core noted for the first time (Ready.Wanted),
// publishing a new version if any is new to the set. Before start, and
// once all names are wanted, it does nothing.
func (w *wantedNames) add(names []string) {
	if !w.started || w.all {
		return
	}
	grew := false
	for _, name := range names {
		if _, ok := w.names[name]; !ok {
			w.names[name] = struct{}{}
			grew = true
		}
	}
	if grew {
		w.grown()
	}
}

// grown publishes the set after names were added (all names past
// maxWantedNames).
func (w *wantedNames) grown() {
	if len(w.names) > maxWantedNames {
		w.all, w.names = true, nil
	}
	w.publish()
}

// publish makes the current set the next version.
func (w *wantedNames) publish() {
	s := &wantedSnapshot{version: 1}
	if old := w.cur.Load(); old != nil {
		s.version = old.version + 1
	}
	if !w.all {
		s.set = wire.NewWanted(slices.Collect(maps.Keys(w.names)))
	}
	w.cur.Store(s)
}

// stale reports whether a batch decoded under version must be decoded
// again before it is matched: it was decoded selectively (not 0) under a
// version older than the current one.
func (w *wantedNames) stale(version uint64) bool {
	if version == 0 {
		return false
	}
	s := w.cur.Load()
	return s != nil && s.version != version
}

// refresh decodes the events of a batch decoded under an older version
// again, from their raw bytes, with the current set (dec is the loop's
// decoder). The bytes were validated when first decoded, so an error here
// is a bug.
func (w *wantedNames) refresh(dec *wire.EventDecoder, p *wire.Publish) error {
	dec.Wanted, _ = w.load()
	for i, raw := range p.RawAll() {
		ev, err := dec.DecodeEvent(raw)
		if err != nil {
			return err
		}
		p.Events[i] = ev
	}
	return nil
}

// startWanted publishes the loop's first wanted set, before it takes any
// input: every name, when advertisements read events beyond the index and
// link table; else none yet (the engine is empty until the loop runs),
// growing with the names the core reports in each Ready's Wanted (its
// engine's filters, its link table's, its Bloom dictionary's terms).
func (l *matchLoop) startWanted() {
	l.want.start(l.adverts != nil)
}
