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
	if len(rd.Wanted) > 0 {
		fmt.Fprintf(&b, "wanted %q\n", rd.Wanted)
	}
	for _, m := range rd.Metrics {
		switch m.Kind {
		case Errors:
			fmt.Fprintf(&b, "metric %s %s %d\n", m.Kind, m.Code, m.N)
		case BloomFill:
			fmt.Fprintf(&b, "metric %s %.3f\n", m.Kind, m.Value)
		case BloomExactIn, BloomFalseForwards:
			fmt.Fprintf(&b, "metric %s conn=%d %d\n", m.Kind, m.Conn, m.N)
		default:
			fmt.Fprintf(&b, "metric %s %d\n", m.Kind, m.N)
		}
	}
	for _, d := range rd.Deliveries {
		fmt.Fprintf(&b, "deliver conn=%d subs=%v: %s\n", d.Conn, d.Subs, DescribeEvent(d.Event))
	}
	for _, f := range rd.Forwards {
		fmt.Fprintf(&b, "forward conn=%d witness=%d: %s\n", f.Conn, f.Witness, describeForward(f.Data))
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

// DescribeEvent renders an encoded event (or why it does not decode).
func DescribeEvent(raw []byte) string {
	var dec wire.EventDecoder
	ev, err := dec.DecodeEvent(raw)
	if err != nil {
		return fmt.Sprintf("undecodable event: %v", err)
	}
	return ev.String()
}

// describeForward renders a forwarded event: a LinkPublish event, or a
// BloomPublish entry (its flag and summary words, then the event).
func describeForward(data []byte) string {
	var dec wire.EventDecoder
	if _, err := dec.DecodeEvent(data); err == nil {
		return DescribeEvent(data)
	}
	m, err := wire.Decode(wire.TypeBloomPublish, append([]byte{0, 1}, data...)) // a batch of this one entry
	if err != nil {
		return fmt.Sprintf("undecodable forward: %v", err)
	}
	be := m.(*wire.BloomPublish).Events[0]
	return fmt.Sprintf("bloom exact=%t summary=%x %s", be.Exact, be.Summary, DescribeEvent(be.Event))
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
