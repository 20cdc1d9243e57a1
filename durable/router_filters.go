package durable

import (
	"fmt"

	"github.com/sift-pubsub/sift/match"
)

// linkFilter is one durable filter of a link, with the SHB (epoch,
// version) of the message that installed it.
type linkFilter struct {
	filter     match.Filter
	epoch, ver uint64
}

// filters handles the filter-set messages of a link. Every message carries
// the SHB's (epoch, version), which grows with each change. An install
// always adds its filter (an extra filter only costs bandwidth); an
// uninstall removes a filter only if it is newer than the install; a full
// set replaces the filters older than itself and marks the link complete,
// unless a newer full set was applied already. So reordered messages never
// drop a filter that is still wanted.
func (r *Router) filters(env Envelope) error {
	m := env.Msg
	l, ok := r.links[env.From]
	if !ok {
		return fmt.Errorf("router %s: filter message from unknown link %s", r.cfg.Node, env.From)
	}
	switch m.Kind {
	case MsgInstall:
		if old, ok := l.filters[m.Sub]; !ok || older(old.epoch, old.ver, m.Epoch, m.Version) {
			l.setFilter(m.Sub, linkFilter{filter: m.Filter, epoch: m.Epoch, ver: m.Version})
			l.gen++
		}
		r.installUp(env.From, m.Sub, m)
	case MsgUninstall:
		if old, ok := l.filters[m.Sub]; ok && older(old.epoch, old.ver, m.Epoch, m.Version) {
			l.dropFilter(m.Sub)
			l.gen++
			r.uninstallUp(env.From, m.Sub)
		}
	case MsgFilters:
		r.fullSet(env.From, l, m)
	}
	return nil
}

// fullSet applies a link's whole filter set sent in answer to a resync of
// this incarnation. An install still waiting upstream for a filter the set
// drops is withdrawn: this router's own filter sets upstream leave it out
// from now on, so an upstream acknowledgement of it could have been made
// before such a set dropped it there. A later install of the same filter
// from below waits anew.
func (r *Router) fullSet(name string, l *link, m Msg) {
	if m.Nonce != r.cfg.Incarnation || (l.complete && older(m.Epoch, m.Version, l.epoch, l.ver)) {
		return
	}
	fs := make(map[string]linkFilter, len(m.Subs))
	for _, s := range m.Subs {
		fs[s.Sub] = linkFilter{filter: s.Filter, epoch: m.Epoch, ver: m.Version}
	}
	for sub, f := range l.filters {
		if older(m.Epoch, m.Version, f.epoch, f.ver) {
			fs[sub] = f // installed after this set was taken
		}
	}
	for sub := range l.filters {
		if _, kept := fs[sub]; !kept {
			delete(r.pending, upKey(name, sub))
		}
	}
	l.replaceFilters(fs)
	l.epoch, l.ver, l.complete = m.Epoch, m.Version, true
	l.gen++
}

func newLink() *link {
	return &link{filters: map[string]linkFilter{}, index: match.NewFast(match.FastConfig{}),
		ids: map[string]match.ID{}, lastFwd: map[string]Tick{}, lastResync: -1 << 62}
}

// setFilter installs (or replaces) sub's filter on the link.
func (l *link) setFilter(sub string, f linkFilter) {
	l.dropFilter(sub)
	l.nextID++
	l.filters[sub], l.ids[sub] = f, l.nextID
	_ = l.index.Insert(l.nextID, f.filter) // ids are never reused
}

// dropFilter removes sub's filter from the link, if it has one.
func (l *link) dropFilter(sub string) {
	if id, ok := l.ids[sub]; ok {
		_ = l.index.Delete(id)
		delete(l.ids, sub)
	}
	delete(l.filters, sub)
}

// replaceFilters makes fs the link's whole filter set, in a new index.
func (l *link) replaceFilters(fs map[string]linkFilter) {
	l.filters, l.ids, l.index = map[string]linkFilter{}, map[string]match.ID{}, match.NewFast(match.FastConfig{})
	for sub, f := range fs {
		l.setFilter(sub, f)
	}
}

// matches reports whether any filter of the link matches m's event.
func (l *link) matches(m Msg) bool {
	l.matchBuf = l.index.Match(m.Event, l.matchBuf[:0])
	return len(l.matchBuf) > 0
}

// older reports whether (e1, v1) comes before (e2, v2).
func older(e1, v1, e2, v2 uint64) bool {
	return e1 < e2 || (e1 == e2 && v1 < v2)
}
