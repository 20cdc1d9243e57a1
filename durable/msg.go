package durable

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sift-pubsub/sift/match"
)

// MsgKind names a message of the durable protocols.
type MsgKind uint8

// The message kinds. Fields used by each are listed; the others are zero.
const (
	// MsgData (knowledge, downstream): Pubend, Tick, Prev, Event: tick Tick
	// is D and every tick in (Prev, Tick) is S.
	MsgData MsgKind = iota + 1
	// MsgSilence (knowledge): Pubend, From, To: ticks [From, To] are S.
	// A router that turned a D tick into S for a link sets Filtered and
	// Origin (its node id) and stamps the message with its incarnation
	// (Epoch) and the generation of the link's filter set (Version).
	MsgSilence
	// MsgLost (knowledge): Pubend, Tick, From: every tick <= Tick is L.
	// From > 0 says that nothing was logged in [From, Tick] (those ticks
	// were S when released: no event of them is lost, so a subscriber
	// that has everything below From gets a silence, not a gap); 0 says
	// nothing about them.
	MsgLost
	// MsgNack (curiosity, upstream): Pubend, Ranges; Refetch, ticks the
	// asking SHB has delivered past and fetches again (see Msg.Refetch).
	MsgNack
	// MsgRelease (upstream): Pubend, Reports; Born, the reporting SHB's
	// store; Epoch and Version, the report's stamp (the SHB's incarnation
	// and its count of reports; zero: unstamped), ordering one store's
	// reports.
	MsgRelease
	// MsgInstall (SHB to hop): Sub, Filter, Epoch, Version; Origin, the
	// SHB it was made for (routers pass it up, so a pubend learns the SHB),
	// and Born, that SHB's store.
	MsgInstall
	// MsgInstallAck (hop to SHB): Sub, CT = per pubend the highest tick
	// already forwarded toward the SHB by any hop on the way; Stamps = per
	// filtering router on the way, the stamp from which its filtered
	// silences include the new filter; Epoch and Version echo those of
	// the install it answers, so that an acknowledgement still in flight
	// for an earlier install (of the receiver's previous incarnation, or
	// withdrawn since) is not taken for the current one.
	MsgInstallAck
	// MsgResync (hop to SHB): Nonce: send your whole filter set.
	MsgResync
	// MsgFilters (SHB to hop): Subs, Epoch, Version, Nonce (echoed from the
	// resync): the whole filter set.
	MsgFilters
	// MsgHello (publisher to PHB): Publisher.
	MsgHello
	// MsgHelloAck (PHB to publisher): Publisher, Seq = highest logged.
	MsgHelloAck
	// MsgPublish (publisher to PHB): Publisher, Seq, Event.
	MsgPublish
	// MsgPubAck (PHB to publisher): Publisher, Seq, Tick (0 if unknown).
	MsgPubAck
	// MsgPubRefused (PHB to publisher): Publisher, Seq = highest logged;
	// resend from Seq+1.
	MsgPubRefused
	// MsgResume (subscriber to SHB): Sub, Filter, HasCT, CT, Session.
	MsgResume
	// MsgStart (SHB to subscriber): Sub, Session, CT: the session starts
	// after these ticks.
	MsgStart
	// MsgEvent (SHB to subscriber): Session, Pubend, Tick, Event.
	MsgEvent
	// MsgSubSilence (SHB to subscriber): Session, Pubend, Tick: nothing
	// matched since the previous message up to Tick.
	MsgSubSilence
	// MsgGap (SHB to subscriber): Session, Pubend, From, To: the ticks
	// [From, To] were released before they could be delivered.
	MsgGap
	// MsgAck (subscriber to SHB): Sub, CT: everything up to CT consumed.
	MsgAck
	// MsgRefused (SHB to subscriber): Sub, Session, Reason; to a
	// publisher of a replicated pubend, also NotLeader and Leader.
	MsgRefused
	// MsgDisconnect (driver to SHB): Sub, Session: the connection closed.
	MsgDisconnect
	// MsgUnsubscribe (subscriber to SHB): Sub.
	MsgUnsubscribe
	// MsgUninstall (SHB to hop): Sub, Epoch, Version.
	MsgUninstall
	// MsgClaim (SHB to every other SHB, flooded through the routers):
	// Claims: subscriptions registered at the sender by a reconnection
	// from elsewhere, each with the CT its registration holds release at.
	// A receiver drops its own registration of such a subscription when
	// it is not connected and holds release no higher (reconnect
	// anywhere).
	MsgClaim
	// MsgHosts (router to router, flooded; see Directory): Origin, the
	// announcing router; Version, its announcement's version (it grows
	// with every change and every restart); Pubends, the pubends it hosts.
	MsgHosts
	// MsgHeartbeat (router to a durable client, no fields): sent every
	// heartbeat period, so that a client that hears nothing for a few
	// periods knows its router is gone (a restarted router cannot speak
	// on the old connection).
	MsgHeartbeat
)

var kindNames = [...]string{
	MsgData: "data", MsgSilence: "silence", MsgLost: "lost", MsgNack: "nack",
	MsgRelease: "release", MsgInstall: "install", MsgInstallAck: "install-ack",
	MsgResync: "resync", MsgFilters: "filters", MsgHello: "hello",
	MsgHelloAck: "hello-ack", MsgPublish: "publish", MsgPubAck: "pub-ack",
	MsgPubRefused: "pub-refused", MsgResume: "resume", MsgStart: "start",
	MsgEvent: "event", MsgSubSilence: "sub-silence", MsgGap: "gap", MsgAck: "ack",
	MsgRefused: "refused", MsgDisconnect: "disconnect", MsgUnsubscribe: "unsubscribe",
	MsgUninstall: "uninstall", MsgClaim: "claim", MsgHosts: "hosts", MsgHeartbeat: "heartbeat",
}

// String returns the kind's name.
func (k MsgKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("MsgKind(%d)", uint8(k))
}

// Report is one SHB's release report for a pubend: everything up to Tr is
// released by all its durable subscribers, and everything up to Td was
// delivered to all its up-to-date ones; both are persisted values.
type Report struct {
	SHB    string
	Tr, Td Tick
}

// SubFilter is one durable subscription in a filter set.
type SubFilter struct {
	Sub    string
	Filter match.Filter
}

// Stamp identifies the filter set a router used for a link: the router's
// node id, its incarnation (Epoch) and the link's filter-set generation
// (Version). Stamps of one router are ordered by (Epoch, Version); stamps of
// different routers are not comparable.
type Stamp struct {
	Node           string
	Epoch, Version uint64
}

// Claim says that subscription Sub is registered at the claiming SHB with
// released(s,p) = CT (reconnect anywhere). Holds says that the claimer's
// registration holds release at CT by itself; Reply marks a counter-claim
// of an SHB the subscriber is connected to, which is never answered.
type Claim struct {
	Sub   string
	CT    CT
	Holds bool
	Reply bool
}

// CT is a checkpoint token: per pubend, the tick up to which a subscriber
// consumed. It is a map; iterate it with Pubends for a fixed order.
type CT map[string]Tick

// Pubends returns the pubends of the token, sorted.
func (c CT) Pubends() []string {
	ps := make([]string, 0, len(c))
	for p := range c {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// Clone returns a copy of c.
func (c CT) Clone() CT {
	d := make(CT, len(c))
	for p, t := range c {
		d[p] = t
	}
	return d
}

// String renders c as {p1:t1 p2:t2}.
func (c CT) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range c.Pubends() {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%d", p, c[p])
	}
	b.WriteByte('}')
	return b.String()
}

// Msg is one message of the durable protocols; Kind says which fields
// are set.
type Msg struct {
	Kind      MsgKind
	Pubend    string
	Tick      Tick
	Prev      Tick
	From, To  Tick
	Event     match.Event
	Ranges    []Range
	Reports   []Report
	Sub       string
	Filter    match.Filter
	HasCT     bool
	CT        CT
	Session   uint64
	Publisher string
	Seq       uint64
	Subs      []SubFilter
	Epoch     uint64
	Version   uint64
	Nonce     uint64
	Filtered  bool
	Reason    string
	// Origin is the router that filtered a silence (with Filtered).
	Origin string
	// Stamps are the filtering routers' stamps of an install
	// acknowledgement.
	Stamps []Stamp
	// Claims are the subscriptions of a claim message.
	Claims []Claim
	// Pubends lists pubend ids (MsgHosts).
	Pubends []string
	// Born names the store of the SHB an install or a release report
	// comes from: the time of that store's first message upstream,
	// persisted with it. A larger Born than a pubend recorded is the same
	// SHB back with an empty disk (pubend_wiped.go); zero: one that does
	// not say.
	Born Tick
	// NotLeader marks a refusal of a publisher by a router whose replica
	// of the replicated pubend does not lead it: the publisher should try
	// another router, not give up. Leader names the router the refusing
	// one believes leads ("": none known yet), to try next.
	NotLeader bool
	Leader    string
	// Refetch marks a nack for ticks the SHB's constream has already
	// passed: a catch-up session fetches again events it was not there
	// for (back after the SHB's tail and the routers' caches forgot
	// them). Routers forward it as it is, and a pubend answers it even
	// while an answer to the same asker that covered those ticks is still
	// going on: that answer has gone by the SHB, so it answers nothing
	// for the session (an outage's recovery answering for seconds held
	// every catch-up behind it). Unmarked nacks are the istream's, for
	// ticks it has not heard yet, whose repeats wait for the answer on
	// its way (Pubend.notAnsweredLately).
	Refetch bool
}

// Envelope is a message with its sender and receiver node ids.
type Envelope struct {
	From, To string
	Msg      Msg
}

// String renders the message on one line for traces and golden files.
func (m Msg) String() string {
	var b strings.Builder
	b.WriteString(m.Kind.String())
	switch m.Kind {
	case MsgData:
		fmt.Fprintf(&b, " %s t=%d prev=%d %s", m.Pubend, m.Tick, m.Prev, m.Event)
	case MsgSilence, MsgGap:
		fmt.Fprintf(&b, " %s [%d,%d]", m.Pubend, m.From, m.To)
		if m.Filtered {
			fmt.Fprintf(&b, " filtered by %s v=%d.%d", m.Origin, m.Epoch, m.Version)
		}
	case MsgLost, MsgSubSilence:
		fmt.Fprintf(&b, " %s t=%d", m.Pubend, m.Tick)
		if m.Kind == MsgLost && m.From > 0 {
			fmt.Fprintf(&b, " silent-from=%d", m.From)
		}
	case MsgEvent:
		fmt.Fprintf(&b, " %s t=%d %s", m.Pubend, m.Tick, m.Event)
	case MsgNack:
		fmt.Fprintf(&b, " %s %v", m.Pubend, m.Ranges)
		if m.Refetch {
			b.WriteString(" refetch")
		}
	case MsgRelease:
		fmt.Fprintf(&b, " %s", m.Pubend)
		for _, r := range m.Reports {
			fmt.Fprintf(&b, " %s:tr=%d,td=%d", r.SHB, r.Tr, r.Td)
		}
	case MsgInstall:
		fmt.Fprintf(&b, " %s %q v=%d.%d", m.Sub, m.Filter.String(), m.Epoch, m.Version)
	case MsgInstallAck, MsgAck, MsgStart:
		fmt.Fprintf(&b, " %s %v", m.Sub, m.CT)
		if m.Kind == MsgInstallAck {
			fmt.Fprintf(&b, " for v=%d.%d", m.Epoch, m.Version)
		}
		for _, st := range m.Stamps {
			fmt.Fprintf(&b, " %s=%d.%d", st.Node, st.Epoch, st.Version)
		}
	case MsgClaim:
		fmt.Fprintf(&b, " from %s", m.Origin)
		for _, c := range m.Claims {
			fmt.Fprintf(&b, " %s@%v", c.Sub, c.CT)
			if c.Holds {
				b.WriteString(" holds")
			}
			if c.Reply {
				b.WriteString(" reply")
			}
		}
	case MsgFilters:
		fmt.Fprintf(&b, " v=%d.%d n=%d", m.Epoch, m.Version, len(m.Subs))
	case MsgHosts:
		fmt.Fprintf(&b, " %s v=%d %v", m.Origin, m.Version, m.Pubends)
	case MsgHello, MsgHelloAck, MsgPublish, MsgPubAck, MsgPubRefused:
		fmt.Fprintf(&b, " %s seq=%d", m.Publisher, m.Seq)
		if m.Kind == MsgPubAck {
			fmt.Fprintf(&b, " t=%d", m.Tick)
		}
	case MsgResume:
		fmt.Fprintf(&b, " %s %q", m.Sub, m.Filter.String())
		if m.HasCT {
			fmt.Fprintf(&b, " ct=%v", m.CT)
		}
	case MsgRefused:
		fmt.Fprintf(&b, " %s: %s", m.Sub, m.Reason)
	case MsgDisconnect, MsgUnsubscribe, MsgUninstall:
		fmt.Fprintf(&b, " %s", m.Sub)
	}
	return b.String()
}

// String renders the envelope as "from->to: message".
func (e Envelope) String() string { return fmt.Sprintf("%s->%s: %s", e.From, e.To, e.Msg) }
