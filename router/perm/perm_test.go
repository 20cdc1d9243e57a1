package perm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

const file = `{
  "alice": {"publish": "tenant == \"a\"", "subscribe": "tenant == \"a\""},
  "bob":   {"subscribe": "tenant == \"b\" && price < 100"},
  "audit": {"subscribe": "*"},
  "feed":  {"publish": "*"}
}`

func TestTable(t *testing.T) {
	tab, err := Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tab.Clients(), ","); got != "alice,audit,bob,feed" {
		t.Fatalf("clients %s", got)
	}
	ev := func(s string) match.Event {
		e, err := match.ParseEventJSON([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, c := range []struct {
		client, filter string
		want           string // "" allowed, else in the error
	}{
		{"alice", `tenant == "a"`, ""},
		{"alice", `tenant == "a" && price > 3`, ""},
		{"alice", `tenant == "b"`, `may subscribe only within tenant == "a"`},
		{"alice", `*`, "does not cover *"},
		{"alice", `price > 3`, "does not cover"},
		{"bob", `tenant == "b" && price < 50`, ""},
		{"bob", `tenant == "b" && price < 150`, "does not cover"},
		{"audit", `*`, ""},
		{"audit", `x exists`, ""},
		{"feed", `x exists`, `client "feed" may not subscribe`},
		{"mallory", `*`, `client "mallory" is not in the permissions file`},
	} {
		err := tab.Subscribe(c.client, match.MustParse(c.filter))
		check(t, "subscribe "+c.client+" "+c.filter, err, c.want)
	}
	for _, c := range []struct {
		client, event string
		want          string
	}{
		{"alice", `{"tenant":"a","price":1}`, ""},
		{"alice", `{"tenant":"b"}`, `may publish only events matching tenant == "a"`},
		{"alice", `{"price":1}`, "may publish only"},
		{"feed", `{"anything":1}`, ""},
		{"bob", `{"tenant":"b"}`, `client "bob" may not publish`},
		{"mallory", `{"a":1}`, "not in the permissions file"},
	} {
		check(t, "publish "+c.client+" "+c.event, tab.Publish(c.client, ev(c.event)), c.want)
	}
	check(t, "advertise alice", tab.Advertise("alice", match.MustParse(`tenant == "a" && x > 1`)), "")
	check(t, "advertise alice *", tab.Advertise("alice", match.MustParse(`*`)), "may advertise only within")
	check(t, "advertise bob", tab.Advertise("bob", match.MustParse(`tenant == "b"`)), "may not publish, so may not advertise")
	var none *Table
	if none.Subscribe("x", match.MustParse("*")) != nil || none.Publish("x", ev(`{"a":1}`)) != nil || none.Advertise("x", match.Filter{}) != nil {
		t.Fatal("a nil table refused something")
	}
}

func check(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: %v, want allowed", what, err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrForbidden)):
		t.Errorf("%s: %v, want ErrForbidden with %q", what, err, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`[]`, "JSON object of client names"},
		{`null`, "got null"},
		{`{"a": {"publsh": "*"}}`, `client "a": json: unknown field "publsh"`},
		{`{"a": {"publish": "x >"}}`, `client "a": publish filter`},
		{`{"a": {"subscribe": 3}}`, `client "a"`},
		{`{"a": "x"}`, `client "a"`},
	} {
		if _, err := Parse([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s): %v, want %q", c.in, err, c.want)
		}
	}
}

// TestSubscribeSound: a subscription Subscribe allows never matches an
// event the client's subscribe filter does not (random filters and
// events over a small domain, so that matches are frequent).
func TestSubscribeSound(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d (replay: edit the seed)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	attrs := []string{"a", "b", "c"}
	ops := []string{"==", "<", "<=", ">", ">=", "!="}
	randFilter := func() string {
		n := rng.IntN(3)
		if n == 0 {
			return "*"
		}
		var parts []string
		for range n {
			parts = append(parts, fmt.Sprintf("%s %s %d", attrs[rng.IntN(3)], ops[rng.IntN(len(ops))], rng.IntN(5)))
		}
		return strings.Join(parts, " && ")
	}
	events := make([]match.Event, 300)
	for i := range events {
		var as []match.Attr
		for _, a := range attrs {
			if rng.IntN(4) > 0 {
				as = append(as, match.Attr{Name: a, Value: match.Int(int64(rng.IntN(5)))})
			}
		}
		events[i] = match.MustEvent(as...)
	}
	allowed := 0
	for range 2000 {
		permit, sub := match.MustParse(randFilter()), match.MustParse(randFilter())
		tab := &Table{rules: map[string]rule{"c": {subscribe: &permit}}}
		if tab.Subscribe("c", sub) != nil {
			continue
		}
		allowed++
		for _, e := range events {
			if sub.Matches(e) && !permit.Matches(e) {
				t.Fatalf("permit %s allowed %s, which matches %s outside it", permit, sub, e)
			}
		}
	}
	if allowed < 100 {
		t.Fatalf("only %d of 2000 subscriptions allowed: the test checks too little", allowed)
	}
}
