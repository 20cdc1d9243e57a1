package wire

import (
	"bytes"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

var attrNames = []string{"a", "exchange", "price", "symbol", "urgent", "volume", "x.y-z", "_id"}

func genValue(t *rapid.T, label string) match.Value {
	switch rapid.IntRange(0, 3).Draw(t, label+".kind") {
	case 0:
		return match.Str(rapid.String().Draw(t, label+".str"))
	case 1:
		return match.Int(rapid.Int64().Draw(t, label+".int"))
	case 2:
		f := rapid.Float64().Draw(t, label+".float")
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0.5
		}
		return match.MustFloat(f)
	}
	return match.Bool(rapid.Bool().Draw(t, label+".bool"))
}

func genEvent(t *rapid.T, label string) match.Event {
	names := rapid.SliceOfNDistinct(rapid.SampledFrom(attrNames), 0, len(attrNames), rapid.ID[string]).Draw(t, label+".names")
	attrs := make([]match.Attr, len(names))
	for i, n := range names {
		attrs[i] = match.Attr{Name: n, Value: genValue(t, label)}
	}
	return match.MustEvent(attrs...)
}

// genEvents draws lo to hi events, labelled prefix0, prefix1, ...; the
// count is drawn as countLabel.
func genEvents(t *rapid.T, countLabel, prefix string, lo, hi int) []match.Event {
	var evs []match.Event
	for i := range rapid.IntRange(lo, hi).Draw(t, countLabel) {
		evs = append(evs, genEvent(t, prefix+string(rune('0'+i))))
	}
	return evs
}

func genMessage(t *rapid.T) Message {
	id := rapid.Uint64().Draw(t, "id")
	text := rapid.StringN(0, 40, -1).Draw(t, "text")
	switch rapid.IntRange(0, 12).Draw(t, "type") {
	case 0:
		lo := rapid.Uint64Range(1, 10).Draw(t, "lo")
		return &Hello{MinVersion: lo, MaxVersion: lo + rapid.Uint64Range(0, 5).Draw(t, "span"), Role: RoleClient, Name: text}
	case 1:
		return &Welcome{Version: id, Name: text, MaxFrame: 1 << 20, MaxSubscriptions: 7}
	case 2:
		return &Attach{Version: id}
	case 3:
		return &Subscribe{ID: id, Filter: text}
	case 4:
		return &Unsubscribe{ID: id}
	case 5:
		evs := make([]match.Event, rapid.IntRange(0, 5).Draw(t, "n"))
		for i := range evs {
			evs[i] = genEvent(t, "ev")
		}
		return &Publish{Seq: id, Events: evs}
	case 6:
		items := make([]DeliverItem, rapid.IntRange(0, 5).Draw(t, "n"))
		for i := range items {
			items[i] = DeliverItem{Subs: rapid.SliceOfN(rapid.Uint64(), 1, 4).Draw(t, "subs"), Event: genEvent(t, "ev")}
		}
		return &Deliver{Items: items}
	case 9:
		reach := genNames(t, "reach")
		return &LinkHello{MinVersion: 1, MaxVersion: 1, Name: reach[0], Reach: reach, Incarnation: rapid.Uint64().Draw(t, "incarnation")}
	case 10:
		return &Reach{Names: genNames(t, "names")}
	case 11:
		snap := rapid.Bool().Draw(t, "snapshot")
		var remove []string
		if !snap {
			remove = rapid.SliceOfN(rapid.StringN(0, 20, -1), 0, 4).Draw(t, "remove")
		}
		return &Routes{Gen: id, Seq: 1 + id%1000, Snapshot: snap, Remove: remove,
			Add: rapid.SliceOfN(rapid.StringN(0, 20, -1), 0, 4).Draw(t, "add")}
	case 12:
		return &RoutesAck{Gen: id, Seq: 1 + id%1000}
	case 7:
		return &Ack{About: rapid.SampledFrom([]Type{TypeSubscribe, TypeUnsubscribe, TypePublish}).Draw(t, "about"), ID: id}
	}
	return &Error{Code: CodeBadFilter, About: TypeSubscribe, Ref: id, Msg: text}
}

// genNames draws a sorted, duplicate-free, non-empty set of router names.
func genNames(t *rapid.T, label string) []string {
	names := rapid.SliceOfNDistinct(rapid.StringMatching(`[a-z][a-z0-9-]{0,8}`), 1, 6, rapid.ID[string]).Draw(t, label)
	slices.Sort(names)
	return names
}

// TestRoundTrip checks that every message decodes to what was encoded:
// re-encoding the decoded message gives the same bytes.
func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genMessage(t)
		frame := AppendFrame(nil, m)
		typ, body, rest, err := SplitFrame(frame, 0)
		if err != nil || len(rest) != 0 || typ != m.Type() {
			t.Fatalf("split: type %v rest %d err %v", typ, len(rest), err)
		}
		got, err := Decode(typ, body)
		if err != nil {
			t.Fatalf("decode %T: %v", m, err)
		}
		if again := AppendFrame(nil, got); !bytes.Equal(again, frame) {
			t.Fatalf("re-encoding %T differs:\n%x\n%x", m, frame, again)
		}
	})
}

// TestEventRoundTrip checks events decode equal, including the raw spans of
// a Publish built with PublishBatch.
func TestEventRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var batch PublishBatch
		evs := make([]match.Event, rapid.IntRange(1, 6).Draw(t, "n"))
		for i := range evs {
			evs[i] = genEvent(t, "ev")
			batch.Add(evs[i])
		}
		frame := batch.AppendFrame(nil, 9)
		m, err := NewFrameReader(bytes.NewReader(frame), 0).ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		p := m.(*Publish)
		for i, e := range evs {
			if !p.Events[i].Equal(e) {
				t.Fatalf("event %d: got %v want %v", i, p.Events[i], e)
			}
			if !bytes.Equal(p.Raw[i], AppendEvent(nil, e)) {
				t.Fatalf("raw %d differs", i)
			}
		}
		var db DeliverBatch
		for i := range evs {
			db.Add([]uint64{uint64(i) + 1}, p.Raw[i])
		}
		typ, body, _, err := SplitFrame(db.AppendFrame(nil), 0)
		if err != nil {
			t.Fatal(err)
		}
		dm, err := Decode(typ, body)
		if err != nil {
			t.Fatal(err)
		}
		for i, it := range dm.(*Deliver).Items {
			if !it.Event.Equal(evs[i]) || it.Subs[0] != uint64(i)+1 {
				t.Fatalf("deliver item %d: %v %v", i, it.Subs, it.Event)
			}
		}
	})
}

func frameOf(typ Type, body []byte) []byte {
	b := []byte{0, 0, 0, byte(len(body) + 1), byte(typ)}
	return append(b, body...)
}

// TestBadInput lists malformed inputs and the code each must produce.
func TestBadInput(t *testing.T) {
	ev := AppendEvent(nil, match.MustEvent(match.Attr{Name: "a", Value: match.Int(1)}))
	cases := []struct {
		name  string
		frame []byte
		code  Code
		msg   string
	}{
		{"empty frame", []byte{0, 0, 0, 0}, CodeMalformed, "length 0"},
		{"oversized", []byte{0, 0x20, 0, 0, 1}, CodeFrameTooLarge, "exceeds the maximum"},
		{"unknown type", frameOf(99, nil), CodeUnknownType, "unknown frame type 99"},
		{"truncated hello", frameOf(TypeHello, []byte{1}), CodeMalformed, "truncated"},
		{"bad version range", frameOf(TypeHello, []byte{3, 2, 1, 0}), CodeMalformed, "version range"},
		{"bad role", frameOf(TypeHello, []byte{1, 1, 9, 0}), CodeMalformed, "role"},
		{"trailing bytes", frameOf(TypeUnsubscribe, []byte{1, 2}), CodeMalformed, "trailing"},
		{"overlong varint", frameOf(TypeUnsubscribe, bytes.Repeat([]byte{0xff}, 11)), CodeMalformed, "varint"},
		{"string past end", frameOf(TypeSubscribe, []byte{1, 50, 'a'}), CodeMalformed, "exceeds"},
		{"invalid utf8 filter", frameOf(TypeSubscribe, []byte{1, 1, 0xff}), CodeMalformed, "UTF-8"},
		{"huge event count", frameOf(TypePublish, []byte{1, 0xff, 0xff, 0x03}), CodeMalformed, "could hold"},
		{"bad attr name", frameOf(TypePublish, []byte{1, 1, 1, 1, '9', tagInt, 2}), CodeMalformed, "invalid attribute name"},
		{"unsorted names", frameOf(TypePublish, []byte{1, 1, 2, 1, 'b', tagInt, 2, 1, 'a', tagInt, 2}), CodeMalformed, "increasing"},
		{"duplicate names", frameOf(TypePublish, []byte{1, 1, 2, 1, 'a', tagInt, 2, 1, 'a', tagInt, 2}), CodeMalformed, "increasing"},
		{"nan", frameOf(TypePublish, append([]byte{1, 1, 1, 1, 'a', tagFloat}, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f)), CodeMalformed, "finite"},
		{"bad tag", frameOf(TypePublish, []byte{1, 1, 1, 1, 'a', 7, 2}), CodeMalformed, "tag 7"},
		{"bad bool", frameOf(TypePublish, []byte{1, 1, 1, 1, 'a', tagBool, 2}), CodeMalformed, "bool"},
		{"deliver without subs", frameOf(TypeDeliver, append([]byte{1, 0}, ev...)), CodeMalformed, "subscription ids"},
		{"bad ack", frameOf(TypeAck, []byte{byte(TypeHello), 1}), CodeMalformed, "cannot acknowledge"},
		{"link hello without self", frameOf(TypeLinkHello, []byte{1, 1, 1, 'b', 1, 1, 'a'}), CodeMalformed, "does not name the sender"},
		{"link hello empty name", frameOf(TypeLinkHello, []byte{1, 1, 0, 0}), CodeMalformed, "router name of 0 bytes"},
		{"reach unsorted", frameOf(TypeReach, []byte{2, 1, 'b', 1, 'a'}), CodeMalformed, "not sorted"},
		{"reach duplicate", frameOf(TypeReach, []byte{2, 1, 'a', 1, 'a'}), CodeMalformed, "not sorted"},
		{"reach empty", frameOf(TypeReach, []byte{0}), CodeMalformed, "empty set"},
		{"routes seq 0", frameOf(TypeRoutes, []byte{1, 0, 0, 0, 0}), CodeMalformed, "seq 0"},
		{"routes bad flag", frameOf(TypeRoutes, []byte{1, 1, 2, 0, 0}), CodeMalformed, "snapshot flag"},
		{"snapshot removes", frameOf(TypeRoutes, []byte{1, 1, 1, 1, 1, 'x', 0}), CodeMalformed, "removes nothing"},
		{"routes huge count", frameOf(TypeRoutes, []byte{1, 1, 0, 0xff, 0xff, 0x03}), CodeMalformed, "could hold"},
		{"routes ack seq 0", frameOf(TypeRoutesAck, []byte{1, 0}), CodeMalformed, "seq 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewFrameReader(bytes.NewReader(c.frame), 1<<20).ReadMessage()
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Code != c.code || !strings.Contains(pe.Msg, c.msg) {
				t.Fatalf("got %v, want code %v with %q", err, c.code, c.msg)
			}
		})
	}
}

// TestFrameReaderEOF distinguishes a clean end between frames from a frame
// cut short.
func TestFrameReaderEOF(t *testing.T) {
	frame := AppendFrame(nil, &Unsubscribe{ID: 5})
	fr := NewFrameReader(bytes.NewReader(frame), 0)
	if _, err := fr.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	if _, err := fr.ReadMessage(); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
	_, err := NewFrameReader(bytes.NewReader(frame[:len(frame)-1]), 0).ReadMessage()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut frame: %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestNegotiate(t *testing.T) {
	if v, err := Negotiate(&Hello{MinVersion: 1, MaxVersion: 3}, 1, 2); v != 2 || err != nil {
		t.Fatalf("got %d %v, want 2", v, err)
	}
	_, err := Negotiate(&Hello{MinVersion: 2, MaxVersion: 3}, 1, 1)
	if CodeOf(err) != CodeVersion || !strings.Contains(err.Error(), "2-3") || !strings.Contains(err.Error(), "1-1") {
		t.Fatalf("got %v, want a version error naming both ranges", err)
	}
}

func TestCheckEvent(t *testing.T) {
	bad := match.MustEvent(match.Attr{Name: "s", Value: match.Str("\xff")})
	if err := CheckEvent(bad); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("got %v, want a UTF-8 error", err)
	}
}

// TestShareStrings: decoding with shared strings gives equal events.
func TestShareStrings(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		evs := []match.Event{genEvent(t, "a"), genEvent(t, "b")}
		frame := AppendFrame(nil, &Publish{Seq: 1, Events: evs})
		typ, body, _, _ := SplitFrame(frame, 0)
		d := EventDecoder{ShareStrings: true}
		m, err := d.Decode(typ, body)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range m.(*Publish).Events {
			if !e.Equal(evs[i]) {
				t.Fatalf("event %d: %v, want %v", i, e, evs[i])
			}
		}
	})
}
