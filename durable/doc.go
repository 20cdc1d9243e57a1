// Package durable owns Sift's exactly-once durable subscriptions, after
// Gryphon (Bhola, Zhao and Auerbach, DSN 2003): ticks and knowledge streams,
// the pubend at the publisher hosting broker (PHB) with its event log,
// idempotent publishing and release, the intermediate broker that filters
// knowledge and consolidates nacks, and the subscriber hosting broker (SHB)
// with its consolidated stream, catch-up streams and persistent filtering
// subsystem (PFS).
//
// # Basics
//
// Every broker is a pure deterministic state machine. It is driven with
// Step (a message, with the current time passed in) and Tick (a timer
// firing), and its effects are collected with Ready: records to persist and
// messages to send. The driver applies Ready.Writes to the broker's Store
// before taking the next Ready, and sends Ready.Msgs only once those writes
// and all earlier ones are synced; Steps taken while a sync runs accumulate
// into the next Ready (group commit). A broker reads its own Store
// synchronously, through an overlay of its own writes not yet handed to
// the driver, so reads are deterministic for a given store content. There are no goroutines, clocks or global random
// sources inside; the simulator in durable/sim runs every role in one
// process from a seed.
//
// # Writes held back
//
// Some progress is not worth a sync of its own: the SHB's LD moved over
// silence (no PFS record) and released(s,p) raised by an acknowledgement,
// and at a pubend the release reports it took and a release over ticks
// that held no event. A broker holds such writes
// back (Deferrer) until its Ready has writes anyway, until another broker
// of the same group commit writes (Host takes them with that batch), or
// until they have waited ProgressHold. An idle pubend renews its
// high-water mark every Lease, so an idle router syncs about once per
// Lease instead of at every idle silence and report. The held progress
// is safe to lose in a crash: reports and idle silences carry the LD and
// released values handed to the driver, not those in memory, so nothing
// upstream or at a subscriber is above what is on disk; a forgotten release covered only
// ticks that held no event and, being below the persisted high-water
// mark, never will; a forgotten report is one lost on the way. See
// shbPubend.holdMeta, SHB.holdAck and Pubend.writeHeld.
//
// # Promises
//
// A subscriber that keeps its checkpoint token (CT) with what it consumed
// receives, per pubend, every event matching its filter with a tick above
// the CT it presents, exactly once and in tick order, except ticks covered
// by gap messages; a gap covers only ticks that were released (L), and a
// connected subscriber that is up to date never receives one. Each event is
// logged once, at its PHB; nothing else stores events. A resent
// (publisher, sequence) is logged at most once.
//
// # Discovery and membership
//
// A pubend releases a tick only once every member SHB has reported it
// released (and, without early release, nothing before every member has
// reported at all). Members are those configured (PubendConfig.SHBs), and
// with LearnSHBs every SHB that sends an install (its Origin) or a report,
// and every one the driver adds (AddSHB); learned members are persisted
// and never forgotten. An install is acknowledged only after its SHB is a
// member on disk, so no tick above a new subscription's start is released
// before its SHB reported it released. That is the whole safety argument
// for a member learned late: what a pubend released before an SHB became
// its member, no subscription of that SHB can need, since none of them
// was acknowledged by the pubend yet (a registration made by a subscriber
// reconnecting with its CT is acknowledged the same way, and its claims
// hold only after that). The simulator checks it with LearnSHBs under
// every fault: a member's latestDelivered bounds release from the L
// prefix it joined at.
//
// In a router mesh, a Directory per router learns every router with
// durable delivery on and the pubends each hosts, by announcements
// flooded over the links; the router makes each of its pubends wait for
// every router's SHB it learned of, and its SHB receive every pubend
// (SHB.AddPubend). What that does:
//
//   - A router joining: its announcement reaches every router; each pubend
//     adds its SHB and releases nothing more until that SHB reported (one
//     report interval); its SHB starts receiving every pubend, its new
//     subscriptions start above what it knows. Subscriptions registered
//     elsewhere start on its pubend at tick 0: they receive every event it
//     had not released when it learned of their SHB; what it released
//     before (published while it was alone) reaches them as a gap.
//   - A router leaving (stopped, or its links down): it stays a member, so
//     every pubend stops releasing at what it last reported, until it
//     reports again (its subscribers lose nothing), or, with DropAfter, it
//     is dropped: release goes on, and its subscribers get gaps for what
//     was released meanwhile; it is taken back when it reports again.
//     Delivery elsewhere goes on, except through it.
//   - A link flapping: knowledge and nacks lost on it are asked for again;
//     the intermediate broker is recreated when the way to a pubend
//     changes and resyncs its filter sets; release waits meanwhile.
//   - A router restarting with an empty disk: its SHB loses its
//     registrations and PFS. Its store has a new Born (Msg.Born, on
//     installs and reports), so every pubend elsewhere keeps holding
//     release at what the previous store last reported, for
//     PubendConfig.WipeGrace; the old subscribers come back with their CTs
//     as if reconnecting from elsewhere (rule SHB 9), are registered again
//     and fetch what they miss from upstream: within the grace they miss
//     nothing; later ones get a gap for what was released after it. Its
//     own pubends lose their log and start over with the clock's ticks:
//     events they had logged and not yet delivered everywhere are gone,
//     and the new pubend cannot tell which ticks its old log held, so a
//     subscriber gets a gap for them where the new pubend released one
//     of its own events ahead of the subscriber's SHB, and nothing at all
//     (the new silences, or a release the new pubend knows to be silent,
//     cover them) where it did not: the one silent loss left, confined
//     to pubends whose disk was lost. Pubends that kept their disk are
//     unaffected.
//
// # Releases of silence
//
// A lost message says where the L prefix's silent end starts
// (MsgLost.From: nothing was logged from there up to the prefix), and
// routers pass it on. A subscriber whose position is at or above the
// tick before it lost nothing to the release and gets a silence; only
// one that missed a tick that held an event gets a gap (which therefore
// always covers a logged tick). A store written before MsgLost.From
// existed, or a message without it, says nothing of the ticks, and a
// gap covers them as before.
//
// # Caveats
//
// With DropAfter set, an SHB silent for longer is dropped (its subscribers
// get gaps for what is released meanwhile) and taken back when it reports
// again. An SHB a pubend never heard of (behind a partition since before
// it joined) is not waited for. The PFS is
// chopped at the L prefix announced by the PHB, not at the SHB's own
// release point, so that a gap only ever covers ticks that are L at the
// pubend.
//
// Routers stack: each installs its links' filters at its upstream
// neighbours and acknowledges an install only once every hop above has
// (multi-hop install acknowledgements, one stamp per filtering router).
//
// Reconnect anywhere: a subscriber may resume with its CT at an SHB that
// does not know it. That SHB registers it, holds release from the CT,
// fetches the ticks its PFS cannot know from upstream by nack and filters
// them itself; claims flooded between SHBs then remove the registration
// left behind once the new one holds release (see shb_claims.go). A
// subscriber that moves must present its CT: without one, an SHB that does
// not know it starts a new subscription and the old registration holds
// release until it is unsubscribed or its SHB dropped. A roaming
// registration keeps sending its claim every report interval. Such a
// registration lowers its SHB's Tr (from the moment its resume arrives,
// before the install is acknowledged), so release reports are stamped
// (the SHB's epoch and a count) and a pubend takes the newest as it is
// rather than the largest: that is what makes a subscriber back within a
// wiped SHB's grace miss nothing once the grace ends.
//
// Nacks back off exponentially (NackRetry doubling to NackRetryMax) with
// jitter from a seeded source; the PHB announces silence every 10 ms while
// events flow and every 100 ms when idle.
//
// Flow control to subscribers: each session holds at most SubQueue events
// per pubend sent and not yet acknowledged, so subscribers must
// acknowledge. An up-to-date subscriber whose queue is full moves to
// catch-up (the PFS holds everything it has not been sent); a catch-up
// stream pauses while the queue is full and rejoins the constream once it
// has conveyed everything up to latestDelivered.
//
// Catch-up fetches are shared: a tick nacked by one session is not nacked
// again by another, and when the sessions catching up on a pubend want at
// least half of the PFS records of a session's next window, the window's
// span is nacked as one range (a cover) whose answer, one store scan at
// the pubend, serves every session; sparse spans are nacked tick by tick.
// A cover leaves out the ticks already in flight on nacks of their own, so
// no tick is asked for twice, and a session just back holds its first nack
// while other sessions are still coming back (each within NackDelay of the
// last, for at most NackRetry), so sessions back from one outage are
// counted in one cover rather than nacking their ticks one by one.
//
// A router stamps each silence it made by filtering a D tick with its
// incarnation and the link's filter-set generation; an SHB ignores such
// silences stamped before its newest install acknowledgement, and a new
// subscription starts above every tick the SHB already knows, so no tick
// above a subscriber's start is ever judged without its filter.
//
// Built with the tag invariants (go test -tags invariants, or go run -tags
// invariants ./cmd/sift sim durable), the SHB checks its derived state
// after every Step and Tick and fails the step when it is inconsistent;
// other builds skip the checks at no cost.
package durable
