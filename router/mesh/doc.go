// Package mesh owns one router's side of the mesh protocol of
// docs/protocol.md ("Router links") as a pure, deterministic state machine: router
// links (hello with reachable sets, loop refusal), subscription
// propagation through a poset.Table with covering, snapshot
// resynchronisation when a link comes up, and install acknowledgements hop
// by hop.
//
// Inputs are method calls (a link came up with the peer's hello, went
// down, a message arrived on it, a local client subscribed or
// unsubscribed); outputs are returned as an Output: messages to send on
// links, client subscriptions now installed everywhere (Ready), and links
// to close. Mesh does no I/O, starts no goroutine and reads no clock; it is
// not safe for concurrent use (the router's matching loop owns it).
//
// # Promises
//
//   - A subscription reaches a neighbour only if no filter already
//     forwarded there covers it (poset table; with the forest, possibly
//     more filters, never fewer events); unsubscribing forwards, in the
//     same Routes message, every filter that becomes uncovered.
//   - Every Routes message is acknowledged (RoutesAck, cumulative per link
//     session) only once the neighbours it caused messages to have
//     acknowledged those; a client subscription is Ready likewise. A
//     subscription, snapshot or addition sends an empty Routes (a barrier)
//     on every link where covering pruned everything, so Ready also covers
//     routers behind links that are still installing a snapshot. A link
//     that goes down stops being waited for. Ready thus means: installed on
//     every router reachable over the links that stayed up.
//   - When a link comes up each side sends a Snapshot of the filters it
//     forwards to the other; the receiver replaces what it held from that
//     neighbour by it and propagates only the difference. The snapshot is
//     streamed in parts under a window (snapstream.go), and any Routes
//     larger than a part is split, additions first (sendParts).
//   - Cycle refusal never touches an existing link (epoch.go): every link
//     has an epoch, given by the accepting router (Accept) and sent in its
//     answer so both ends hold it, newer than every link either end knew
//     of; Reach carries the newest epoch along each path. Of the links of
//     a cycle, only the newest is refused (Accept, LinkUp, with an error
//     naming both paths) or closed (a cycle noticed later from a Reach
//     update, two links having raced; see Mesh.Receive), by both of its
//     ends; routers whose links on the cycle are older close nothing.
//   - Each router run has an incarnation (Config.Incarnation), sent in its
//     hello. A hello from a router already linked with the same
//     incarnation is refused; with another one the peer restarted, so the
//     old link is stale: LinkUp drops it (reported in Output.Close) and
//     takes the new one. HelloTo leaves any link to the peer out of the
//     reachable set it announces.
//   - Bad input (an unparsable filter, an unknown removal, a sequence gap)
//     returns an error and changes no state; the caller closes the link.
//   - Advertisements (Config.Advertise, advert.go; off by default, and
//     then nothing here changes), with SIENA's semantics: a local
//     publisher advertises filters (Advertise, Unadvertise); every
//     advertisement floods to every link (each link is sent the
//     advertisements held by some source other than itself, a set by
//     canonical text; choice: no covering between advertisements, so an
//     advertisement covered by another is still sent); a filter of the
//     table's forwarding set toward link N is sent to N only if it overlaps
//     (match.Overlaps) an advertisement received from N. Since a filter
//     covering f overlaps whatever f overlaps, the table's covering still
//     applies unchanged. When N advertises more, the forwarded filters
//     that now overlap are sent to N in one Routes. Withdrawals (N
//     unadvertises, or a link drops and its advertisements are withdrawn
//     from the others) flood too but take no subscription back. Choice:
//     a withdrawal travels on the control stream and would overtake the
//     events published under the advertisement still in flight on the
//     data streams (the multi-process test lost a publisher's last events
//     that way when it exited right after Flush). So what N is sent holds
//     the table's forwarding set restricted to N's advertisements, plus
//     filters that overlapped an earlier advertisement of N's; those
//     leave when unsubscribed (or uncovered) and when the link resyncs
//     (a new link session starts from an empty set). Adverts share the link's
//     Routes sequence and RoutesAck. Both ends of a link must agree: the
//     hello carries the advertise flag (HelloTo) and LinkUp refuses a peer
//     that disagrees, naming both; each side's first message on a link is
//     its adverts snapshot (then an empty routes snapshot), and a peer
//     whose hello lied is refused on that message as well. An advertisement is
//     Ready (Ready.Advert) once every link has acknowledged its flood (or,
//     where nothing new was flooded, a barrier): each router sends the
//     subscriptions that overlap a new advertisement back toward it before
//     acknowledging, on the same FIFO stream, so when the publisher's
//     router sees the Ready every subscription overlapping it is installed
//     on the path. A publisher
//     that waits for Ready misses no event of a subscription already Ready
//     (both made with the links unchanged since). Conforms says whether a
//     client's event matches one of its advertisements; the router refuses
//     those that do not, since subscriptions reach a router only where
//     advertisements said they must.
//   - A client subscription may be placed with clients' help (rto.go):
//     through RTO (StartSubscribeRTO, then AnswerRTO per round of answers;
//     the subscription reaches the table, the neighbours and Ready only
//     once placed) or FF (SubscribeFF with claims about the fixed filters,
//     Pin). Under poset.Verify, and under Majority unless every client
//     asked lies alike, no answer makes an event be missed; answers that
//     are malformed or stale (the table changed meanwhile), and
//     AbandonRTO (a timeout, an assistant gone), make the router place the
//     filter itself. An Unsubscribe during the placement cancels it.
//
// # Caveats
//
// Each link up is a neighbour of the poset.Table (AddNeighbour when it
// comes up: its forwarding set is the snapshot; RemoveNeighbour when it
// goes), so links that are down cost nothing per subscription.
// Acknowledgements owed are indexed per link, so a RoutesAck costs what it
// releases, not the number of acknowledgements pending.
//
// Barriers cost one small message per tree link per subscription (the
// filters themselves stay pruned). Acknowledging at once a subscription
// forwarded nowhere would make Ready premature when a router behind a
// covering filter has just linked to a new router whose snapshot is still
// in flight; flags announcing "not settled" cannot replace the barrier,
// since they race with the subscription. A client that does not wait for
// Ready could skip its barrier (not built).
//
// Advertisements cost, per change of the table's forwarding set toward a
// link, an overlap test against each advertisement received from it, and
// per new advertisement one test per filter forwarded there and not sent
// yet. Advertisements are not pruned by covering among themselves (each
// distinct canonical text floods once per link).
//
// Advertisements restrict plain subscriptions only. Durable delivery
// (package durable, driven by the router) installs durable filters toward
// every pubend by its own messages, so it works between routers with
// advertisements and durable publishers do not advertise; the plain
// subscriptions of a router still reach a pubend's router only where a
// plain publisher there advertised.
//
// Events are routed with the table's own exact matching (Route); the
// router's per-event path uses its fast index for local clients.
package mesh
