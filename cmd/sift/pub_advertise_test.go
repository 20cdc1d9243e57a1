package main

import (
	"strings"
	"testing"
	"time"
)

// TestAdvertFlags: sift pub refuses --advertise with --durable (durable
// delivery needs no advertisement), --hold without --advertise and a
// negative --hold, and a malformed --advertise filter when the flag is
// read.
func TestAdvertFlags(t *testing.T) {
	defer func(saved advertFlag) { pubAdverts = saved }(pubAdverts)
	set := func(hold time.Duration, filters ...string) {
		t.Helper()
		pubAdverts = advertFlag{hold: hold}
		for _, f := range filters {
			if err := pubAdverts.Set(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name    string
		durable bool
		hold    time.Duration
		filters []string
		want    string // "" accepted
	}{
		{"advertise", false, 0, []string{`x > 1`}, ""},
		{"advertise and hold", false, time.Second, []string{`x > 1`}, ""},
		{"durable alone", true, 0, nil, ""},
		{"durable and advertise", true, 0, []string{`x > 1`}, "durable delivery needs no advertisement"},
		{"hold alone", false, time.Second, nil, "--hold needs --advertise"},
		{"negative hold", false, -time.Second, []string{`x > 1`}, "--hold needs --advertise"},
	} {
		set(c.hold, c.filters...)
		err := checkAdvertFlags(c.durable)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := (&advertFlag{}).Set(`x >`); err == nil {
		t.Error("a malformed --advertise filter was accepted")
	}
}
