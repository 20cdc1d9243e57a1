package core

import (
	"fmt"
	"strings"

	"github.com/sift-pubsub/sift/internal/wire"
)

// DescribeReady renders rd one effect a line, in the order the driver
// carries them out, for scripts and failure messages.
func DescribeReady(rd Ready) string {
	var b strings.Builder
	for _, m := range rd.Metrics {
		if m.Kind == Errors {
			fmt.Fprintf(&b, "metric %s %s %d\n", m.Kind, m.Code, m.N)
			continue
		}
		fmt.Fprintf(&b, "metric %s %d\n", m.Kind, m.N)
	}
	for _, f := range rd.Frames {
		fmt.Fprintf(&b, "frame conn=%d: %s\n", f.Conn, DescribeFrame(f.Data))
	}
	for _, r := range rd.Replies {
		if r.Err != nil {
			fmt.Fprintf(&b, "reply conn=%d %s id=%d: %v\n", r.Conn, r.About, r.Ref, r.Err)
			continue
		}
		fmt.Fprintf(&b, "reply conn=%d %s id=%d: ack\n", r.Conn, r.About, r.Ref)
	}
	for _, c := range rd.Close {
		fmt.Fprintf(&b, "close conn=%d %s: %s\n", c.Conn, c.Code, c.Reason)
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
	case *wire.LinkHello:
		s := fmt.Sprintf("link-hello name=%s reach=%q incarnation=%d", m.Name, m.Reach, m.Incarnation)
		if m.Bloom != nil {
			s += fmt.Sprintf(" bloom=%+v", *m.Bloom)
		}
		if m.Advertise {
			s += " advertise"
		}
		return s
	case *wire.Routes:
		return fmt.Sprintf("routes gen=%d seq=%d%s remove=%q add=%q", m.Gen, m.Seq, snapshot(m.Snapshot), m.Remove, m.Add)
	case *wire.Reach:
		return fmt.Sprintf("reach names=%q", m.Names)
	case *wire.Adverts:
		return fmt.Sprintf("adverts gen=%d seq=%d%s remove=%q add=%q", m.Gen, m.Seq, snapshot(m.Snapshot), m.Remove, m.Add)
	case *wire.RoutesAck:
		return fmt.Sprintf("routes-ack gen=%d seq=%d", m.Gen, m.Seq)
	case *wire.BloomTerms:
		return fmt.Sprintf("bloom-terms%s remove=%s add=%s", snapshot(m.Snapshot), describeTerms(m.Remove), describeTerms(m.Add))
	}
	return fmt.Sprintf("%s %+v", m.Type(), m)
}

func snapshot(on bool) string {
	if on {
		return " snapshot"
	}
	return ""
}

// describeTerms renders dictionary terms as [qualifier: constraint, ...]
// (no qualifier: the constraint alone).
func describeTerms(ts []wire.BloomTerm) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%q", t.C)
		if t.Qual != "" {
			parts[i] = fmt.Sprintf("%q: %q", t.Qual, t.C)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}
