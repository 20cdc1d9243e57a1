package core

import (
	"fmt"
	"strings"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/mesh"
)

// DescribeReady renders rd one effect a line, in the order the driver
// carries them out, for scripts and failure messages.
func DescribeReady(rd Ready) string {
	var b strings.Builder
	for _, m := range rd.Metrics {
		fmt.Fprintf(&b, "metric %s %d\n", m.Kind, m.N)
	}
	for _, f := range rd.Frames {
		fmt.Fprintf(&b, "frame conn=%d: %s\n", f.Conn, DescribeFrame(f.Data))
	}
	for _, out := range rd.Mesh {
		b.WriteString(DescribeMeshOutput(out))
	}
	return b.String()
}

// DescribeFrame renders one encoded frame (or why it does not decode).
func DescribeFrame(data []byte) string {
	t, body, _, err := wire.SplitFrame(data, wire.HardMaxFrame)
	if err != nil {
		return fmt.Sprintf("bad frame: %v", err)
	}
	m, err := wire.Decode(t, body)
	if err != nil {
		return fmt.Sprintf("%s: undecodable: %v", t, err)
	}
	return DescribeMessage(m)
}

// DescribeMessage renders one wire message.
func DescribeMessage(m wire.Message) string {
	switch m := m.(type) {
	case *wire.RTOQuery:
		return fmt.Sprintf("rto-query q=%d filter=%q vector=%q", m.Q, m.Filter, m.Filters)
	case *wire.FFFixed:
		return fmt.Sprintf("ff-fixed gen=%d filters=%q", m.Gen, m.Filters)
	case *wire.Ack:
		return fmt.Sprintf("ack %s id=%d", m.About, m.ID)
	case *wire.AdvertAck:
		return fmt.Sprintf("advert-ack %s id=%d", m.About, m.ID)
	}
	return fmt.Sprintf("%s %+v", m.Type(), m)
}

// DescribeMeshOutput renders a mesh output: sends, Ready subscriptions,
// links to close.
func DescribeMeshOutput(out mesh.Output) string {
	var b strings.Builder
	for _, s := range out.Sends {
		fmt.Fprintf(&b, "mesh send link=%d: %s\n", s.Link, DescribeMessage(s.Msg))
	}
	for _, r := range out.Ready {
		what := "subscription"
		if r.Advert {
			what = "advertisement"
		}
		fmt.Fprintf(&b, "mesh ready client=%d %s=%d\n", r.Client, what, r.Ref)
	}
	for _, c := range out.Close {
		fmt.Fprintf(&b, "mesh close link=%d: %s\n", c.Link, c.Reason)
	}
	return b.String()
}
