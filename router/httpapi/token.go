package httpapi

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/router/client"
)

// A checkpoint token travels as an SSE id: the CT's pubends and ticks in
// URL query form, pubends sorted, e.g. "east=1733000000123456&west=17".
// It is what the browser sends back as Last-Event-ID.

// encodeCT renders ct as an SSE id.
func encodeCT(ct client.CT) string {
	v := url.Values{}
	for p, t := range ct {
		v.Set(p, strconv.FormatInt(int64(t), 10))
	}
	return v.Encode()
}

// decodeCT parses an SSE id written by encodeCT: every pubend once, every
// tick a non-negative integer.
func decodeCT(s string) (client.CT, error) {
	v, err := url.ParseQuery(s)
	if err != nil {
		return nil, fmt.Errorf("Last-Event-ID %q is not a checkpoint token: %w", s, err)
	}
	ct := client.CT{}
	for p, ts := range v {
		if p == "" || len(ts) != 1 {
			return nil, fmt.Errorf("Last-Event-ID %q is not a checkpoint token: pubend %q given %d times", s, p, len(ts))
		}
		t, err := strconv.ParseInt(ts[0], 10, 64)
		if err != nil || t < 0 {
			return nil, fmt.Errorf("Last-Event-ID %q is not a checkpoint token: tick %q of pubend %s is not a non-negative integer", s, ts[0], p)
		}
		ct[p] = durable.Tick(t)
	}
	if len(ct) == 0 {
		return nil, fmt.Errorf("Last-Event-ID %q is not a checkpoint token: no pubend", s)
	}
	return ct, nil
}
