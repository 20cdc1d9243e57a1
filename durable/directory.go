package durable

import (
	"fmt"
	"maps"
	"slices"
)

// DirectoryConfig configures a router's directory of the durable mesh.
type DirectoryConfig struct {
	// Node is this router's name, the origin of its announcements.
	Node string
	// Local lists the pubends hosted at this router.
	Local []string
	// Version orders this router's announcements across restarts: it must
	// grow with every start (a boot time or counter).
	Version uint64
	// Refresh is how often the whole directory is sent to every neighbour
	// again, so that an announcement lost on a link is made up for
	// (default 1 s).
	Refresh Tick
}

// hostEntry is what the directory knows of one router: the version of
// its newest announcement and the pubends it hosts.
type hostEntry struct {
	version uint64
	pubends []string
}

// Directory is a router's knowledge of the durable mesh: every router
// with durable delivery on, and the pubends each hosts. It is learned
// through the links: each router announces its pubends (MsgHosts) to its
// neighbours, a router floods an announcement newer than the one it holds
// to its other neighbours, sends a new neighbour every entry it holds, and
// sends every neighbour its whole directory again every Refresh. The mesh
// is a tree of links (the mesh protocol refuses cycles), so a flood ends;
// versions make a late or repeated announcement harmless.
//
// Entries are never forgotten: a router that left (a link down, a router
// stopped) still hosts its pubends and still hosts durable subscribers
// that may come back, so its pubends stay known and it stays a member of
// every pubend's release (see Pubend.AddSHB). A pubend announced by two
// routers is taken as hosted by the one whose announcement has the
// higher version, and of equal versions by the one whose name sorts
// first: a replicated pubend moves to its new leader's router, which
// announces it with SetLocal, also while the old leader's router is down
// and cannot withdraw it.
//
// Like the brokers, a Directory is a pure state machine: no I/O, no
// clock, no goroutines.
type Directory struct {
	cfg     DirectoryConfig
	hosts   map[string]hostEntry
	links   []string
	out     []Envelope
	lastRef Tick
	changed bool
}

// NewDirectory returns a directory that knows only this router.
func NewDirectory(cfg DirectoryConfig) (*Directory, error) {
	if cfg.Node == "" {
		return nil, fmt.Errorf("directory config: Node is required")
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = 1_000_000
	}
	local := slices.Compact(slices.Sorted(slices.Values(cfg.Local)))
	d := &Directory{cfg: cfg, hosts: map[string]hostEntry{cfg.Node: {version: cfg.Version, pubends: local}},
		lastRef: -1 << 62, changed: true}
	return d, nil
}

// SetLinks replaces the set of linked neighbours; each new one is sent
// every entry the directory holds.
func (d *Directory) SetLinks(links []string) {
	links = slices.Compact(slices.Sorted(slices.Values(links)))
	for _, l := range links {
		if !slices.Contains(d.links, l) {
			d.sendAll(l)
		}
	}
	d.links = links
}

// Step handles an announcement from neighbour env.From. A malformed one is
// an error and changes nothing.
func (d *Directory) Step(_ Tick, env Envelope) error {
	m := env.Msg
	if m.Kind != MsgHosts {
		return fmt.Errorf("directory %s: unexpected %v from %s", d.cfg.Node, m.Kind, env.From)
	}
	if m.Origin == "" {
		return fmt.Errorf("directory %s: announcement without origin from %s", d.cfg.Node, env.From)
	}
	if m.Origin == d.cfg.Node {
		return nil // our own, back from a neighbour (or an older run's)
	}
	old, ok := d.hosts[m.Origin]
	if ok && m.Version <= old.version {
		return nil
	}
	d.hosts[m.Origin] = hostEntry{version: m.Version, pubends: slices.Compact(slices.Sorted(slices.Values(m.Pubends)))}
	d.changed = true
	for _, l := range d.links {
		if l != env.From {
			d.send(l, m.Origin)
		}
	}
	return nil
}

// Tick sends the whole directory to every neighbour every Refresh.
func (d *Directory) Tick(now Tick) error {
	if now-d.lastRef < d.cfg.Refresh {
		return nil
	}
	d.lastRef = now
	for _, l := range d.links {
		d.sendAll(l)
	}
	return nil
}

// Ready returns the announcements to send (a directory persists
// nothing).
func (d *Directory) Ready() Ready {
	out := d.out
	d.out = nil
	return Ready{Msgs: out}
}

// Changed reports whether an entry changed since the last call.
func (d *Directory) Changed() bool {
	c := d.changed
	d.changed = false
	return c
}

// Routers returns every router known, this one included, sorted.
func (d *Directory) Routers() []string { return slices.Sorted(maps.Keys(d.hosts)) }

// Pubends maps every pubend known to its host.
func (d *Directory) Pubends() map[string]string {
	out := map[string]string{}
	for _, r := range d.Routers() {
		for _, p := range d.hosts[r].pubends {
			if old, ok := out[p]; !ok || d.hosts[r].version > d.hosts[old].version {
				out[p] = r // routers in order: of equal versions, the first name wins
			}
		}
	}
	return out
}

// SetLocal replaces the pubends hosted at this router (a replicated
// pubend whose leader moved here, or away), announced to every neighbour
// under a version above any this router announced and at least minVersion
// (a clock reading, so that the newest claim of a pubend wins).
func (d *Directory) SetLocal(pubends []string, minVersion uint64) {
	local := slices.Compact(slices.Sorted(slices.Values(pubends)))
	e := d.hosts[d.cfg.Node]
	if slices.Equal(local, e.pubends) {
		return
	}
	d.hosts[d.cfg.Node] = hostEntry{version: max(e.version+1, minVersion), pubends: local}
	d.changed = true
	for _, l := range d.links {
		d.send(l, d.cfg.Node)
	}
}

// Local returns the pubends hosted at this router.
func (d *Directory) Local() []string { return slices.Clone(d.hosts[d.cfg.Node].pubends) }

func (d *Directory) sendAll(to string) {
	for _, r := range d.Routers() {
		if r != to {
			d.send(to, r)
		}
	}
}

func (d *Directory) send(to, origin string) {
	e := d.hosts[origin]
	d.out = append(d.out, Envelope{From: d.cfg.Node, To: to,
		Msg: Msg{Kind: MsgHosts, Origin: origin, Version: e.version, Pubends: slices.Clone(e.pubends)}})
}
