// Package perm holds content-based permissions: per client name, a
// publish filter every event the client publishes must match, and a
// subscribe filter that must cover every subscription it makes (decided
// by match.Covers, the covering test the routing structures use).
//
// A permissions file is a JSON object mapping a client name (the name in
// its client certificate, router/certs) to its two filters:
//
//	{"alice": {"publish": "tenant == \"a\"", "subscribe": "tenant == \"a\""},
//	 "audit": {"subscribe": "*"}}
//
// A filter left out allows nothing of that kind ("*" allows everything),
// and a client the table does not list may do nothing. A nil *Table
// allows everything: the router runs without permissions.
//
// Table is immutable; a router swaps in a new one to reload. Its methods
// match the permission check router/httpapi takes (httpapi.Permit), so the
// HTTP gateway applies the same table to its own users.
//
// Caveats: filters are conjunctions, so a client's permission is one
// conjunction per kind; a subscription that matches nothing is covered by
// every filter and so allowed.
package perm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/sift-pubsub/sift/match"
)

// ErrForbidden is what every refusal Is (errors.Is); the refusal's own
// message says why, without repeating "forbidden".
var ErrForbidden = errors.New("forbidden")

// Refusal is the error of a refused request.
type Refusal struct{ Msg string }

func (e *Refusal) Error() string { return e.Msg }

// Is makes every Refusal ErrForbidden.
func (e *Refusal) Is(target error) bool { return target == ErrForbidden }

func refusal(format string, args ...any) error { return &Refusal{Msg: fmt.Sprintf(format, args...)} }

// Table maps client names to their permissions.
type Table struct {
	rules map[string]rule
}

// rule is one client's permissions; nil allows nothing.
type rule struct {
	publish, subscribe *match.Filter
}

// Rule is the JSON form of one client's permissions.
type Rule struct {
	Publish   *string `json:"publish,omitempty"`
	Subscribe *string `json:"subscribe,omitempty"`
}

// Load reads a permissions file.
func Load(path string) (*Table, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("permissions: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("permissions %s: %w", path, err)
	}
	return t, nil
}

// Parse reads a permissions table from its JSON form. Unknown keys, and
// filters that do not parse, are errors naming the client.
func Parse(data []byte) (*Table, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("want a JSON object of client names: %w", err)
	}
	if raw == nil {
		return nil, errors.New("want a JSON object of client names, got null")
	}
	t := &Table{rules: make(map[string]rule, len(raw))}
	for name, body := range raw {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		var r Rule
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("client %q: %w (a client maps to {\"publish\": FILTER, \"subscribe\": FILTER})", name, err)
		}
		var ru rule
		var err error
		if ru.publish, err = parseFilter(r.Publish); err != nil {
			return nil, fmt.Errorf("client %q: publish filter: %w", name, err)
		}
		if ru.subscribe, err = parseFilter(r.Subscribe); err != nil {
			return nil, fmt.Errorf("client %q: subscribe filter: %w", name, err)
		}
		t.rules[name] = ru
	}
	return t, nil
}

func parseFilter(text *string) (*match.Filter, error) {
	if text == nil {
		return nil, nil
	}
	f, err := match.Parse(*text)
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// Clients returns the names the table lists, sorted.
func (t *Table) Clients() []string {
	if t == nil {
		return nil
	}
	names := make([]string, 0, len(t.rules))
	for n := range t.rules {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// rule is client's entry; a client the file does not list may do nothing.
func (t *Table) rule(client string) (rule, error) {
	r, ok := t.rules[client]
	if !ok {
		return rule{}, refusal("client %q is not in the permissions file", client)
	}
	return r, nil
}

// Subscribe checks a subscription: the client's subscribe filter must
// cover f. A nil Table allows it.
func (t *Table) Subscribe(client string, f match.Filter) error {
	if t == nil {
		return nil
	}
	r, err := t.rule(client)
	switch {
	case err != nil:
		return err
	case r.subscribe == nil:
		return refusal("client %q may not subscribe", client)
	case !match.Covers(*r.subscribe, f):
		return refusal("client %q may subscribe only within %s, which does not cover %s", client, r.subscribe, f)
	}
	return nil
}

// Publish checks one event: it must match the client's publish filter.
// A nil Table allows it.
func (t *Table) Publish(client string, ev match.Event) error {
	if t == nil {
		return nil
	}
	r, err := t.rule(client)
	switch {
	case err != nil:
		return err
	case r.publish == nil:
		return refusal("client %q may not publish", client)
	case !r.publish.Matches(ev):
		return refusal("client %q may publish only events matching %s", client, r.publish)
	}
	return nil
}

// Advertise checks an advertisement (what a publisher says it will
// publish): the client's publish filter must cover f. A nil Table allows
// it.
func (t *Table) Advertise(client string, f match.Filter) error {
	if t == nil {
		return nil
	}
	r, err := t.rule(client)
	switch {
	case err != nil:
		return err
	case r.publish == nil:
		return refusal("client %q may not publish, so may not advertise", client)
	case !match.Covers(*r.publish, f):
		return refusal("client %q may advertise only within %s, which does not cover %s", client, r.publish, f)
	}
	return nil
}
