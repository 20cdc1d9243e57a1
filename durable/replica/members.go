package replica

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sift-pubsub/sift/durable"
)

// Membership changes by an operator (ChangeMembers): add a replica,
// replace one by another, remove one. Who may be a replica is the roster,
// replicated state (a key of the pubend's state, so in snapshots too):
// Config.Replicas until an operator first changes it. Raft's own
// membership (the voters' ids) follows the roster through
// joint-consensus changes (ConfChangeV2, entering a joint configuration
// and leaving it automatically):
//   - add NAME: the roster gains NAME; NAME's router, started with
//     Join, asks to join under a fresh id, and the leader adds that id as
//     a learner, then, once it caught up, as a voter (learner.go);
//   - replace OLD NEW: the roster swaps them; NEW joins as a learner, and
//     once it caught up one change removes OLD's id and makes NEW's a
//     voter;
//   - remove NAME: the roster loses NAME, and one change removes its id.
//
// The leader may be removed or replaced too: it hands leadership to
// another voter first, and the next leader finishes the change (every
// leader removes the ids whose names left the roster). A name out of the
// roster is never let (back) in: a removed replica that still runs asks
// to join in vain.

// MemberOp is a kind of membership change.
type MemberOp string

// The membership changes.
const (
	MemberAdd     MemberOp = "add"
	MemberReplace MemberOp = "replace"
	MemberRemove  MemberOp = "remove"
)

// MemberChange is one membership change: Op on replica Name (With: the
// replica that replaces Name).
type MemberChange struct {
	Op   MemberOp
	Name string
	With string
}

// NotLeaderError refuses a membership change at a replica that does not
// lead: Leader names the one it believes leads ("" if none yet).
type NotLeaderError struct {
	Pubend, Replica, Leader string
}

func (e *NotLeaderError) Error() string {
	leader := e.Leader
	if leader == "" {
		leader = "none known yet"
	}
	return fmt.Sprintf("replica %s does not lead pubend %s (leader: %s)", e.Replica, e.Pubend, leader)
}

// ErrChangePending refuses a membership change while another is under
// way (proposed and not applied, or a joint configuration not yet left).
var ErrChangePending = errors.New("a membership change is under way; try again once it is applied")

// roster is who may be a replica, and whom each name replaces when it
// joins.
type roster struct {
	names    []string
	replaces map[string]string // new name -> the name it replaces
}

// rosterKey is the roster's key in the pubend's state: its first byte is
// no role byte of package durable's keys, so the pubend never reads it.
var rosterKey = []byte("\x00replica/roster")

func (ro roster) encode() []byte {
	e := enc{}
	e.version(codecV1)
	e.Uvarint(uint64(len(ro.names)))
	for _, n := range ro.names {
		e.Str(n)
	}
	olds := slices.Sorted(maps.Keys(ro.replaces))
	e.Uvarint(uint64(len(olds)))
	for _, n := range olds {
		e.Str(n)
		e.Str(ro.replaces[n])
	}
	return e.B
}

func decodeRoster(b []byte) (roster, error) {
	d := newDec(b)
	d.version()
	ro := roster{replaces: map[string]string{}}
	for range d.Count(2) {
		ro.names = append(ro.names, d.Str())
	}
	for range d.Count(4) {
		n, old := d.Str(), d.Str()
		ro.replaces[n] = old
	}
	if err := d.Done(); err != nil {
		return roster{}, fmt.Errorf("roster: %w", err)
	}
	return ro, nil
}

// loadRoster reads the roster from the committed state (Config.Replicas
// if an operator never changed it).
func (r *Replica) loadRoster() error {
	v, ok, err := r.state.Get(rosterKey)
	if err != nil {
		return fmt.Errorf("read roster: %w", err)
	}
	if !ok {
		r.roster = roster{names: slices.Clone(r.cfg.Replicas), replaces: map[string]string{}}
		return nil
	}
	r.roster, err = decodeRoster(v)
	return err
}

// appliedRoster takes a new roster from applied writes.
func (r *Replica) appliedRoster(ops []durable.Op) error {
	for _, op := range ops {
		if op.Kind == durable.OpSet && string(op.Key) == string(rosterKey) {
			ro, err := decodeRoster(op.Value)
			if err != nil {
				return err
			}
			r.roster = ro
			r.lead.rosterWait = false
		}
	}
	return nil
}

// Roster returns who may be a replica, as committed here.
func (r *Replica) Roster() []string { return slices.Clone(r.roster.names) }

// ChangeMembers starts a membership change at the leader. It refuses,
// changing nothing, at a replica that does not lead (a NotLeaderError),
// while another change is under way (ErrChangePending), and when the
// change does not fit the roster: an unknown replica, a name already a
// replica, the last replica removed. It returns once the change is
// proposed; Roster, Learners and Voters show when it is applied: an
// added or replacing replica is a learner once its router (started with
// Join) asks to join, and a voter once it caught up. Removing or
// replacing the leader itself makes it transfer leadership first.
func (r *Replica) ChangeMembers(c MemberChange) error {
	if r.fatal != nil {
		return r.fatal
	}
	if !r.Leading() {
		return &NotLeaderError{Pubend: r.cfg.Pubend.ID, Replica: r.cfg.Name, Leader: r.Leader()}
	}
	if !r.changeIdle() {
		return ErrChangePending
	}
	next, err := r.nextRoster(c)
	if err != nil {
		return fmt.Errorf("pubend %s: %s %s: %w", r.cfg.Pubend.ID, c.Op, c.Name, err)
	}
	set := &durable.Batch{}
	set.Set(rosterKey, next.encode())
	p := proposal{Proposer: r.id, Ops: set.Ops}
	if err := r.rn.Propose(p.encode()); err != nil {
		return fmt.Errorf("pubend %s: propose the roster: %w", r.cfg.Pubend.ID, err)
	}
	r.lead.rosterWait = true
	r.Stats.MemberChanges++
	return nil
}

// nextRoster checks a change against the roster and returns the roster
// after it.
func (r *Replica) nextRoster(c MemberChange) (roster, error) {
	in := func(n string) bool { return slices.Contains(r.roster.names, n) }
	unknown := func(n string) error {
		return fmt.Errorf("unknown replica %q (replicas: %s)", n, strings.Join(r.roster.names, ", "))
	}
	next := roster{names: slices.Clone(r.roster.names), replaces: map[string]string{}}
	for k, v := range r.roster.replaces {
		next.replaces[k] = v
	}
	switch c.Op {
	case MemberAdd:
		if err := r.newName(c.Name); err != nil {
			return roster{}, err
		}
		next.names = append(next.names, c.Name)
		delete(next.replaces, c.Name)
	case MemberReplace:
		if !in(c.Name) {
			return roster{}, unknown(c.Name)
		}
		if err := r.newName(c.With); err != nil {
			return roster{}, err
		}
		next.names = append(slices.DeleteFunc(next.names, func(n string) bool { return n == c.Name }), c.With)
		next.replaces[c.With] = c.Name
	case MemberRemove:
		switch {
		case !in(c.Name):
			return roster{}, unknown(c.Name)
		case len(r.roster.names) == 1:
			return roster{}, errors.New("the last replica cannot be removed")
		}
		next.names = slices.DeleteFunc(next.names, func(n string) bool { return n == c.Name })
	default:
		return roster{}, fmt.Errorf("unknown membership change %q (want add, replace or remove)", c.Op)
	}
	return next, nil
}

// newName checks a name that is to join the roster.
func (r *Replica) newName(n string) error {
	switch {
	case n == "" || len(n) > maxPeerName:
		return fmt.Errorf("a replica name of 1-%d bytes is required", maxPeerName)
	case slices.Contains(r.roster.names, n):
		return fmt.Errorf("%s is already a replica", n)
	}
	for _, o := range r.roster.names {
		if nameID(o) == nameID(n) {
			return fmt.Errorf("%s and %s share a raft id", n, o)
		}
	}
	return nil
}

// voterIDs returns the voters' ids that belong to name.
func (r *Replica) voterIDs(name string) []uint64 {
	var ids []uint64
	for _, id := range slices.Sorted(maps.Keys(r.members)) {
		if r.members[id] == name && r.isVoter(id) {
			ids = append(ids, id)
		}
	}
	return ids
}
