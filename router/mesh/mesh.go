package mesh

import (
	"fmt"
	"slices"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
)

// DefaultMaxLinks is Config.MaxLinks when zero.
const DefaultMaxLinks = 8

// Config configures a Mesh.
type Config struct {
	// Name is this router's name, unique in the mesh. Required.
	Name string
	// Table is the routing structure: "poset" (default when empty),
	// "forest" or "shallow" (poset.TableConfig).
	Table string
	// Merge turns on perfect merging of the filters forwarded to each
	// link (poset.TableConfig.Merge): a link receives, instead of several
	// filters, their merge when it matches exactly their union. Off by
	// default; routers of a mesh need not agree.
	Merge bool
	// MaxLinks bounds the links up at once (DefaultMaxLinks when zero).
	MaxLinks int
	// Incarnation identifies this run of the router (the caller picks it
	// at random when the router starts); it goes in every hello, so that a
	// peer holding a link to a previous run can tell it is stale.
	Incarnation uint64
	// Advertise turns advertisements on (advert.go): publishers advertise
	// what they will publish, advertisements flood, and a subscription is
	// forwarded to a link only if it overlaps an advertisement received
	// from there. Every router of a mesh must agree (the hello carries it,
	// and LinkUp refuses a peer that disagrees). Off by default: every
	// subscription goes everywhere covering allows.
	Advertise bool
	// SnapshotPart bounds the filter text of one part of the snapshot a
	// link gets when it comes up, in bytes (DefaultSnapshotPart when zero,
	// at most wire.DefaultMaxFrame/2); SnapshotWindow bounds the parts
	// sent and not acknowledged yet (DefaultSnapshotWindow when zero).
	// See snapstream.go.
	SnapshotPart   int
	SnapshotWindow int
	// LinkVersion is the newest link protocol version this router
	// announces and accepts (wire.LinkVersion when zero, at least
	// wire.Version): a router given wire.Version links as routers did
	// before later versions existed, which is how tests stand in for one.
	LinkVersion uint64
}

// Link identifies one session of a router link: a new value every time a
// link comes up, so a late call about a link that has gone is harmless.
type Link uint64

// Client identifies a local client connection.
type Client uint32

// Send is a message to send on a link.
type Send struct {
	Link Link
	Msg  wire.Message
}

// Ready says a client subscription is installed on every router reachable
// (or, with Advert set, that every subscription overlapping the client's
// advertisement Ref is installed at this router; with Batch set, that
// every subscription of the batch SubscribeBatch started at Ref is).
type Ready struct {
	Client Client
	Ref    uint64
	Advert bool
	Batch  bool
}

// Close asks the caller to close a link the Mesh has already dropped.
type Close struct {
	Link   Link
	Reason string
}

// Output is what one input produced, in order within each list.
type Output struct {
	Sends []Send
	Ready []Ready
	Close []Close
	// Held is, for a Routes message Receive accepted, the net change it
	// made to what the link holds, as the filters the mesh parsed and
	// keeps: a mirror of the link's filters (the router's link table)
	// applies it instead of parsing the message's texts again.
	Held *HeldChange
}

// HeldChange is the net change a Routes message made to what a link
// holds: filters added and removed, one entry per copy, in canonical
// order. For a snapshot it is the difference from what the link held.
type HeldChange struct {
	Add, Remove []match.Filter
}

func (o *Output) send(l Link, m wire.Message) { o.Sends = append(o.Sends, Send{l, m}) }

// Mesh is one router's mesh state. See the package doc.
type Mesh struct {
	name     string
	incarn   uint64
	clock    uint64 // the largest link epoch seen (epoch.go)
	maxLinks int
	table    *poset.Table
	nextLink Link
	links    map[Link]*link
	bySlot   map[poset.Iface]*link
	acks     acks
	placing  map[clientRef]*placing // RTO placements in progress
	adv      *adverts               // nil: advertisements off
	version  uint64                 // the newest link version announced
	// snapshot streaming (snapstream.go)
	snapPart, snapWindow int
}

// New returns a Mesh with no links and no subscriptions.
func New(cfg Config) (*Mesh, error) {
	if cfg.Name == "" || len(cfg.Name) > wire.MaxNameLen {
		return nil, fmt.Errorf("mesh: router name of %d bytes (want 1-%d)", len(cfg.Name), wire.MaxNameLen)
	}
	if cfg.MaxLinks == 0 {
		cfg.MaxLinks = DefaultMaxLinks
	}
	if cfg.SnapshotPart == 0 {
		cfg.SnapshotPart = DefaultSnapshotPart
	}
	if cfg.SnapshotWindow == 0 {
		cfg.SnapshotWindow = DefaultSnapshotWindow
	}
	if cfg.SnapshotPart < 0 || cfg.SnapshotPart > maxSnapshotPart || cfg.SnapshotWindow < 0 {
		return nil, fmt.Errorf("mesh: snapshot part %d bytes (want 1-%d), window %d (want 1 or more)", cfg.SnapshotPart, maxSnapshotPart, cfg.SnapshotWindow)
	}
	if cfg.LinkVersion == 0 {
		cfg.LinkVersion = wire.LinkVersion
	}
	if cfg.LinkVersion < wire.Version || cfg.LinkVersion > wire.LinkVersion {
		return nil, fmt.Errorf("mesh: link version %d out of range %d-%d", cfg.LinkVersion, wire.Version, wire.LinkVersion)
	}
	if cfg.MaxLinks < 0 || cfg.MaxLinks > 1<<16 {
		return nil, fmt.Errorf("mesh: max links %d out of range 1-%d", cfg.MaxLinks, 1<<16)
	}
	t, err := poset.NewTable(poset.TableConfig{Structure: cfg.Table, Merge: cfg.Merge})
	if err != nil {
		return nil, fmt.Errorf("mesh: %w", err)
	}
	m := &Mesh{
		name: cfg.Name, incarn: cfg.Incarnation, maxLinks: cfg.MaxLinks, table: t, version: cfg.LinkVersion,
		links:    make(map[Link]*link),
		bySlot:   make(map[poset.Iface]*link),
		acks:     newAcks(),
		snapPart: cfg.SnapshotPart, snapWindow: cfg.SnapshotWindow,
	}
	if cfg.Advertise {
		m.adv = newAdverts()
	}
	return m, nil
}

// Name returns the router's name.
func (m *Mesh) Name() string { return m.name }

// Len returns the number of distinct (interface, filter) subscriptions in
// the routing table, from clients and neighbours.
func (m *Mesh) Len() int { return m.table.Len() }

// clientIface maps a client to its table interface, above every link slot.
func (m *Mesh) clientIface(c Client) poset.Iface { return poset.Iface(m.maxLinks+1) + poset.Iface(c) }

// Route returns where an event that arrived on link from (0: from a local
// client) goes: the links, in increasing order, and the local clients
// holding a matching subscription, in increasing order.
func (m *Mesh) Route(e match.Event, from Link) ([]Link, []Client) {
	var fromIface poset.Iface
	if l := m.links[from]; l != nil {
		fromIface = l.slot
	}
	var links []Link
	var clients []Client
	for _, i := range m.table.Route(e, fromIface) {
		switch {
		case i > poset.Iface(m.maxLinks):
			clients = append(clients, Client(i-poset.Iface(m.maxLinks+1)))
		case m.bySlot[i] != nil && i != fromIface:
			links = append(links, m.bySlot[i].id)
		}
	}
	slices.Sort(links)
	slices.Sort(clients)
	return links, clients
}
