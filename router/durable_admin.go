package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"

	"github.com/sift-pubsub/sift/durable/replica"
)

// Membership changes of replicated pubends (sift admin pubend, served on
// the HTTP listener by router/http.go): the change is handed to the
// driver, which asks the replica (replica.ChangeMembers, a pure state
// machine) and answers with the replica's status after it.

// ErrNotReplicated refuses a membership change for a pubend this router
// holds no replica of.
var ErrNotReplicated = errors.New("no replica of this pubend here")

// adminReq is one membership change for the driver.
type adminReq struct {
	pubend string
	change replica.MemberChange
	reply  chan adminReply
}

type adminReply struct {
	status DurableReplicaStatus
	err    error
}

// ChangeReplicas asks this router's replica of pubend to make a
// membership change. It fails, changing nothing, with ErrNotReplicated,
// a *replica.NotLeaderError (which names the leader), replica.ErrChangePending
// or the replica's reason for refusing the change; else it returns the
// replica's status once the change is proposed (Roster shows the roster
// as applied).
func (r *Router) ChangeReplicas(ctx context.Context, pubend string, c replica.MemberChange) (DurableReplicaStatus, error) {
	if r.durable == nil {
		return DurableReplicaStatus{}, errNoDurable
	}
	if r.durable.replicas[pubend] == nil { // set once at start
		return DurableReplicaStatus{}, fmt.Errorf("pubend %q: %w", pubend, ErrNotReplicated)
	}
	req := &adminReq{pubend: pubend, change: c, reply: make(chan adminReply, 1)}
	if !r.durable.inputReplica(durableInput{admin: req}, ctx.Done()) {
		return DurableReplicaStatus{}, ctx.Err()
	}
	select {
	case rep := <-req.reply:
		return rep.status, rep.err
	case <-ctx.Done():
		return DurableReplicaStatus{}, ctx.Err()
	}
}

// serveAdmin carries out a membership change (driver goroutine).
func (d *durableNode) serveAdmin(req *adminReq) {
	h := d.replicas[req.pubend]
	if h == nil {
		req.reply <- adminReply{err: fmt.Errorf("pubend %q: %w", req.pubend, ErrNotReplicated)}
		return
	}
	err := h.r.ChangeMembers(req.change)
	if err == nil {
		d.log.Info("durable replica membership change proposed", "pubend", req.pubend, "op", string(req.change.Op),
			"replica", req.change.Name, "with", req.change.With)
	}
	req.reply <- adminReply{status: d.statusOf(h), err: err}
}

// adminRequest is the body of POST /admin/pubend/{pubend}.
type adminRequest struct {
	Op      replica.MemberOp `json:"op"`
	Replica string           `json:"replica"`
	With    string           `json:"with,omitempty"`
}

// AdminAnswer is the answer of POST /admin/pubend/{pubend}: the replica's
// status after the change was proposed, or why it was refused (and, when
// this router does not lead the pubend, who does, as far as it knows).
type AdminAnswer struct {
	Status *DurableReplicaStatus `json:"status,omitempty"`
	Error  string                `json:"error,omitempty"`
	Leader string                `json:"leader,omitempty"`
}

// serveAdminHTTP answers POST /admin/pubend/{pubend} with JSON: 200 once
// the change is proposed; 400 for a malformed request or a change the
// roster refuses; 403 for a client not on a loopback address (membership
// changes are taken only from the router's own machine: the listener is
// unauthenticated); 404 for a pubend not replicated here; 409 when this
// router does not lead it (Leader names who does); 503 while another
// change is under way.
func (r *Router) serveAdminHTTP(w http.ResponseWriter, req *http.Request) {
	if !loopback(req.RemoteAddr) {
		writeAdmin(w, http.StatusForbidden, AdminAnswer{Error: "membership changes are taken only from a loopback address (run sift admin on the router's machine)"})
		return
	}
	var body adminRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		writeAdmin(w, http.StatusBadRequest, AdminAnswer{Error: "request body: " + err.Error()})
		return
	}
	st, err := r.ChangeReplicas(req.Context(), req.PathValue("pubend"), replica.MemberChange{Op: body.Op, Name: body.Replica, With: body.With})
	var nl *replica.NotLeaderError
	switch {
	case err == nil:
		writeAdmin(w, http.StatusOK, AdminAnswer{Status: &st})
	case errors.As(err, &nl):
		writeAdmin(w, http.StatusConflict, AdminAnswer{Error: err.Error(), Leader: nl.Leader, Status: &st})
	case errors.Is(err, ErrNotReplicated), errors.Is(err, errNoDurable):
		writeAdmin(w, http.StatusNotFound, AdminAnswer{Error: err.Error()})
	case errors.Is(err, replica.ErrChangePending):
		writeAdmin(w, http.StatusServiceUnavailable, AdminAnswer{Error: err.Error(), Status: &st})
	case req.Context().Err() != nil:
		writeAdmin(w, http.StatusServiceUnavailable, AdminAnswer{Error: err.Error()})
	default:
		writeAdmin(w, http.StatusBadRequest, AdminAnswer{Error: err.Error(), Status: &st})
	}
}

func writeAdmin(w http.ResponseWriter, code int, a AdminAnswer) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(a)
}

// loopback reports whether a request's remote address is a loopback one.
func loopback(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
