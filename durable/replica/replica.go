package replica

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"slices"
	"strings"

	"github.com/sift-pubsub/sift/durable"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Replica is one replica of a pubend: a raft node whose log carries the
// pubend's state changes, and, while it leads, the pubend itself.
type Replica struct {
	cfg     Config
	store   durable.Store
	state   prefixStore // the pubend's committed state
	id      uint64
	log     *logStore
	rn      *raft.RawNode
	applied point             // the last applied entry and the configuration as of it
	members map[uint64]string // replicated: voters' names by id
	peers   map[uint64]string // soft: every id heard from, by name
	roster  roster            // who may be a replica (members.go)

	chunkSeq   uint64               // the last chunked message sent (chunks.go)
	assemblies map[uint64]*assembly // chunked messages being received, by sender id
	boot       *durable.Batch       // writes of a new replica, for the first Ready

	lastTick  durable.Tick // time of the last raft tick
	ticking   bool
	elapsed   int    // raft ticks since the leader was last heard (followers)
	timeout   int    // election timeout drawn for this round
	seenTerm  uint64 // the term and vote the timer last restarted at (followTerm)
	seenVote  uint64
	sinceJoin int

	lead leader // the pubend, while leading

	inFlight bool          // a raft Ready was taken, not yet advanced
	onSynced []*pb.Message // raft's local responses to step once the Ready in flight is synced
	// onApplied: raft's responses to applies whose writes the driver
	// applies before the next call (stepped then: applying needs no sync).
	onApplied []*pb.Message
	deferred  *deferredAppend // raft's append taken during a sync (ReadyInFlight), for the next Ready
	snapsTo   []uint64        // followers sent a snapshot by the Ready in flight
	peerOut   []PeerMsg       // join requests and synced raft messages not yet taken
	peerNow   []PeerMsg       // raft messages that need no sync, not yet taken
	fatal     error

	leadingWas  bool  // Leading as of the previous Ready
	leadingNote *bool // a change of Leading for the next Ready
	// Stats counts what the replica did.
	Stats Stats
}

// deferredAppend is raft's append taken by ReadyInFlight: its writes and
// the responses to this replica's raft, which wait for the sync of the
// next Ready.
type deferredAppend struct {
	writes   *durable.Batch
	onSynced []*pb.Message
}

// Stats counts what a replica did.
type Stats struct {
	NotLeader   int // pubend messages dropped: this replica was not the PHB
	Activations int // times this replica became the PHB
	Proposals   int // batches of the pubend proposed
	Pipelined   int // of which proposed during the leader's sync (proposeInFlight)
	Dropped     int // proposals raft refused (the replica stopped serving until re-fenced)
	Snapshots   int // snapshots applied
	Joins       int // membership changes proposed for a joining replica
	QuorumLost  int // times the leader stopped being the PHB, a majority silent (quorum.go)
	// MemberChanges counts operators' membership changes proposed
	// (members.go).
	MemberChanges int
	Chunked       int // peer messages sent in chunks (snapshots)
	Learners      int // joining replicas added as learners (learner.go)
	Transfers     int // leadership transfers started to leave the voters (learner.go)
	Preferred     int // leadership transfers started to the preferred replica (prefer.go)
}

// Ready is what a replica asks its driver to do, in this order: apply
// Writes to the store before the next Step, StepPeer or Tick (reads see
// them); send PeerNow and Msgs, at once, without waiting for the sync;
// sync the writes if Sync is set; then send Peer; then call Advance.
// Applied lists the entries this Ready applies, for observers (the
// simulator's oracle).
//
// PeerNow and Msgs need no local sync (the driver overlaps it with the
// network): PeerNow is what raft lets leave before the local log is
// durable (appends, heartbeats, votes asked: raft counts this replica's
// own entries and vote only once Advance reports them synced), and Msgs
// are the pubend's messages released by applied entries, which are
// committed, so durable on a majority already. Peer holds what must
// wait: answers to appends and votes.
type Ready struct {
	Writes  *durable.Batch
	Sync    bool
	Msgs    []durable.Envelope
	PeerNow []PeerMsg
	Peer    []PeerMsg
	Applied []Applied
	// Leading is set when the replica started (true) or stopped (false)
	// being the PHB since the previous Ready.
	Leading *bool
	// advance: a raft Ready is in flight (Advance is due even if the
	// rest is empty).
	advance bool
}

// Applied is one committed entry a Ready applies: its index and the
// pubend's writes it carries (none for raft's own entries).
type Applied struct {
	Index, Term uint64
	Data        []byte
	Ops         []durable.Op
}

// Empty reports whether the Ready asks for nothing.
func (rd Ready) Empty() bool {
	return !rd.advance && rd.Writes.Empty() && len(rd.Msgs) == 0 && len(rd.PeerNow) == 0 && len(rd.Peer) == 0 &&
		len(rd.Applied) == 0 && rd.Leading == nil
}

var errApplyOverlay = errors.New("replica: the pubend's writes go through raft, not Apply")

// New recovers a replica from its store: empty for a new replica (which
// bootstraps, or joins with Config.Join).
func New(cfg Config, store durable.Store) (*Replica, error) {
	if err := cfg.populate(); err != nil {
		return nil, err
	}
	p := cfg.Pubend.ID
	r := &Replica{cfg: cfg, store: store, state: prefixStore{base: store, pre: prefix(p, tableState)},
		members: map[uint64]string{}, peers: map[uint64]string{}, assemblies: map[uint64]*assembly{}}
	if err := r.recover(); err != nil {
		return nil, fmt.Errorf("replica %s of %s: %w", cfg.Name, p, err)
	}
	if err := r.loadRoster(); err != nil {
		return nil, fmt.Errorf("replica %s of %s: %w", cfg.Name, p, err)
	}
	for _, name := range cfg.Replicas {
		r.peers[nameID(name)] = name
	}
	for id, name := range r.members {
		r.peers[id] = name
	}
	r.log.snapshot = r.makeSnapshot
	rn, err := raft.NewRawNode(&raft.Config{
		ID: r.id, ElectionTick: cfg.ElectionTicks, HeartbeatTick: cfg.HeartbeatTicks,
		Storage: r.log, Applied: r.applied.index, PreVote: true, Logger: quietLogger,
		MaxSizePerMsg: cfg.MaxMsgSize, MaxInflightMsgs: 256, MaxUncommittedEntriesSize: cfg.MaxUncommitted,
		// Storage writes as messages (ready.go): the leader's appends
		// leave before its own sync; applying is bounded by what may be
		// uncommitted, not by one message's size.
		AsyncStorageWrites: true, MaxCommittedSizePerReady: cfg.MaxUncommitted,
	})
	if err != nil {
		return nil, fmt.Errorf("replica %s of %s: raft: %w", cfg.Name, p, err)
	}
	r.rn = rn
	r.newTimeout()
	return r, nil
}

// quietLogger drops raft's informational logging; its panics still panic.
var quietLogger = &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)}

// recover loads the id, the log, the applied point and the members, or
// starts a new replica.
func (r *Replica) recover() error {
	p := r.cfg.Pubend.ID
	v, ok, err := r.store.Get(prefix(p, tableID))
	if err != nil {
		return fmt.Errorf("read id: %w", err)
	}
	if !ok {
		r.start()
		return nil
	}
	if len(v) != 8 {
		return fmt.Errorf("id record of %d bytes", len(v))
	}
	r.id = binary.BigEndian.Uint64(v)
	if r.log, err = loadLog(p, r.store); err != nil {
		return err
	}
	if v, ok, err := r.store.Get(prefix(p, tableApplied)); err != nil {
		return fmt.Errorf("read applied point: %w", err)
	} else if ok {
		if r.applied, err = decodePoint(v); err != nil {
			return fmt.Errorf("applied point: %w", err)
		}
	} else {
		r.applied = point{conf: &pb.ConfState{}}
	}
	r.log.conf = r.applied.conf
	return r.loadMembers()
}

// start makes a new replica: a voter of the initial configuration under
// its name's id, or, joining, a replica under a fresh id that knows
// nothing yet. Its writes go with the first Ready.
func (r *Replica) start() {
	p := r.cfg.Pubend.ID
	r.boot = &durable.Batch{}
	r.log = &logStore{pubend: p, hard: &pb.HardState{}, conf: &pb.ConfState{}}
	r.applied = point{conf: &pb.ConfState{}}
	if r.cfg.Join {
		r.id = freshID(r.cfg.Rand)
	} else {
		r.id = nameID(r.cfg.Name)
		conf := &pb.ConfState{}
		for _, name := range r.cfg.Replicas {
			conf.Voters = append(conf.Voters, nameID(name))
			r.members[nameID(name)] = name
			r.boot.Set(memberKey(p, nameID(name)), []byte(name))
		}
		// The log starts after index 1, term 1, holding the initial
		// configuration (raft's recommended bootstrap).
		r.log.compIdx, r.log.compTrm, r.log.conf = 1, 1, conf
		r.applied = point{index: 1, term: 1, conf: conf}
		r.boot.Set(prefix(p, tableCompact), point{index: 1, term: 1, conf: conf}.encode())
		r.boot.Set(prefix(p, tableApplied), r.applied.encode())
		if err := r.log.setHard(hardState(1, 0, 1), r.boot); err != nil {
			r.fatal = err
		}
	}
	r.boot.Set(prefix(p, tableID), binary.BigEndian.AppendUint64(nil, r.id))
}

func hardState(term, vote, commit uint64) *pb.HardState {
	return &pb.HardState{Term: &term, Vote: &vote, Commit: &commit}
}

func (r *Replica) loadMembers() error {
	pre := prefix(r.cfg.Pubend.ID, tableMember)
	return r.store.Scan(pre, prefixEnd(pre), func(k, v []byte) bool {
		if len(k) == len(pre)+8 {
			r.members[binary.BigEndian.Uint64(k[len(pre):])] = string(v)
		}
		return true
	})
}

// ID returns the replica's raft id.
func (r *Replica) ID() uint64 { return r.id }

// Name returns the replica's name.
func (r *Replica) Name() string { return r.cfg.Name }

// Leading reports whether the replica is the PHB: it leads and its pubend
// runs.
func (r *Replica) Leading() bool { return r.lead.pubend != nil }

// Pubend returns the pubend while the replica leads, else nil.
func (r *Replica) Pubend() *durable.Pubend { return r.lead.pubend }

// Leader returns the name of the replica this one believes leads ("" if
// none).
func (r *Replica) Leader() string { return r.peers[r.rn.BasicStatus().Lead] }

// Status returns raft's view of the replica.
func (r *Replica) Status() raft.BasicStatus { return r.rn.BasicStatus() }

// Voter reports whether this replica's id is a voter, as applied here.
func (r *Replica) Voter() bool { return r.isVoter(r.id) }

// Learners returns the names of the learners (replicas catching up
// before they vote) as applied here, sorted by id.
func (r *Replica) Learners() []string {
	var out []string
	for _, id := range slices.Concat(r.applied.conf.GetLearners(), r.applied.conf.GetLearnersNext()) {
		out = append(out, r.peers[id])
	}
	return out
}

// Voters returns the names of the voters as applied here, sorted by id.
func (r *Replica) Voters() []string {
	var out []string
	for _, id := range r.applied.conf.GetVoters() {
		out = append(out, r.peers[id])
	}
	return out
}

// NotLeader starts the reason of a refusal sent to a publisher by a
// router whose replica does not lead the pubend: the publisher should try
// the next replica's router (IsNotLeader), not give up.
const NotLeader = "not leader: "

// IsNotLeader reports whether a refusal's reason says the router does not
// lead the pubend.
func IsNotLeader(reason string) bool { return strings.HasPrefix(reason, NotLeader) }

// NotLeaderReason is the reason of a not-leader refusal of pubend by
// router, naming the leader it knows of ("" for none yet), for people
// and for clients older than the refusal's leader field (the router sends
// the leader in durable.Msg.Leader to the others).
func NotLeaderReason(pubend, router, leader string) string {
	if leader == "" {
		leader = "unknown yet"
	}
	return fmt.Sprintf("%spubend %q is replicated; router %s does not lead it (leader: %s)", NotLeader, pubend, router, leader)
}
