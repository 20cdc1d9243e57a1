package wire

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func genAdvertMessage(t *rapid.T) Message {
	filters := rapid.SliceOfN(rapid.StringMatching(`[a-z]{1,3} [<>=]{1,2} [0-9]{1,3}`), 0, 6)
	switch rapid.IntRange(0, 3).Draw(t, "type") {
	case 0:
		m := &Adverts{Gen: rapid.Uint64().Draw(t, "gen"), Seq: rapid.Uint64Range(1, 1<<40).Draw(t, "seq"),
			Snapshot: rapid.Bool().Draw(t, "snapshot"), Add: filters.Draw(t, "add")}
		if !m.Snapshot {
			m.Remove = filters.Draw(t, "remove")
		}
		return m
	case 1:
		return &Advertise{ID: rapid.Uint64().Draw(t, "id"), Filter: rapid.StringN(0, 40, -1).Draw(t, "filter")}
	case 2:
		return &Unadvertise{ID: rapid.Uint64().Draw(t, "id")}
	}
	about := rapid.SampledFrom([]Type{TypeAdvertise, TypeUnadvertise}).Draw(t, "about")
	return &AdvertAck{About: about, ID: rapid.Uint64().Draw(t, "id")}
}

// TestAdvertRoundTrip: every advertisement message decodes to what was
// encoded, under a named, known type.
func TestAdvertRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genAdvertMessage(t)
		typ, body, rest, err := SplitFrame(AppendFrame(nil, m), HardMaxFrame)
		if err != nil || len(rest) != 0 {
			t.Fatalf("split: %v (%d left)", err, len(rest))
		}
		if !typ.Known() || strings.HasPrefix(typ.String(), "type-") {
			t.Fatalf("type %d unnamed or unknown", typ)
		}
		got, err := Decode(typ, body)
		if err != nil {
			t.Fatalf("decode %T: %v", m, err)
		}
		if !reflect.DeepEqual(normaliseAdvert(got), normaliseAdvert(m)) {
			t.Fatalf("round trip:\n got %#v\nwant %#v", got, m)
		}
	})
}

// normaliseAdvert makes empty and nil filter lists compare equal.
func normaliseAdvert(m Message) Message {
	a, ok := m.(*Adverts)
	if !ok {
		return m
	}
	c := *a
	if len(c.Add) == 0 {
		c.Add = nil
	}
	if len(c.Remove) == 0 {
		c.Remove = nil
	}
	return &c
}

// TestAdvertBadInput: malformed advertisement bodies are refused with
// CodeMalformed and an error naming the problem.
func TestAdvertBadInput(t *testing.T) {
	body := func(m Message) []byte { return m.AppendBody(nil) }
	long := &Advertise{ID: 1, Filter: strings.Repeat("x", MaxFilterLen+1)}
	cases := []struct {
		name string
		typ  Type
		body []byte
		want string
	}{
		{"adverts seq 0", TypeAdverts, body(&Adverts{Gen: 1, Seq: 0}), "seq 0"},
		{"snapshot with removals", TypeAdverts, body(&Adverts{Gen: 1, Seq: 1, Snapshot: true, Remove: []string{"x > 1"}}), "removes nothing"},
		{"bad snapshot flag", TypeAdverts, []byte{1, 1, 2, 0, 0}, "snapshot flag"},
		{"truncated adverts", TypeAdverts, body(&Adverts{Gen: 1, Seq: 1, Add: []string{"x > 1"}})[:6], "adverts add"},
		{"trailing bytes", TypeUnadvertise, append(body(&Unadvertise{ID: 3}), 0), "trailing"},
		{"advertise filter too long", TypeAdvertise, body(long), "exceeds"},
		{"advertise bad utf-8", TypeAdvertise, append(binary.AppendUvarint([]byte{1}, 1), 0xff), "utf-8"},
		{"ack about subscribe", TypeAdvertAck, body(&AdvertAck{About: TypeSubscribe, ID: 1}), "cannot acknowledge"},
		{"empty ack", TypeAdvertAck, nil, "advert ack type"},
	}
	for _, c := range cases {
		_, err := Decode(c.typ, c.body)
		if err == nil || CodeOf(err) != CodeMalformed || !strings.Contains(strings.ToLower(err.Error()), c.want) {
			t.Errorf("%s: error %v, want CodeMalformed containing %q", c.name, err, c.want)
		}
	}
}

// FuzzAdvert feeds arbitrary bytes, seeded with each advertisement
// message, to the frame splitter and decoder: never a panic, and whatever
// decodes re-encodes to a stable frame.
func FuzzAdvert(f *testing.F) {
	for _, m := range []Message{
		&Adverts{Gen: 3, Seq: 1, Snapshot: true, Add: []string{`symbol == "IBM"`}},
		&Adverts{Gen: 3, Seq: 2, Remove: []string{`symbol == "IBM"`}, Add: []string{`price > 5`}},
		&Advertise{ID: 1, Filter: `price > 5`},
		&Unadvertise{ID: 1},
		&AdvertAck{About: TypeAdvertise, ID: 1},
	} {
		f.Add(AppendFrame(nil, m))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFrame(t, data)
	})
}

// TestLinkHelloAdvertise: the advertise flag survives the round trip with
// and without Bloom parameters; a hello without flags (what routers wrote
// before they existed) is byte for byte the hello of a router that does
// not advertise, so such routers still link; flags present but zero, and
// unknown flags, are refused.
func TestLinkHelloAdvertise(t *testing.T) {
	bp := &BloomParams{M: 1024, K: 3, Hash: "bloom/v3-murmur3-double"}
	for _, m := range []*LinkHello{
		{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"a", "b"}, Incarnation: 9, Advertise: true},
		{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"b"}, Bloom: bp, Incarnation: 7, Advertise: true},
		{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"b"}, Bloom: bp, Incarnation: 7},
	} {
		got, err := Decode(TypeLinkHello, m.AppendBody(nil))
		if err != nil {
			t.Fatalf("decode %+v: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip: got %#v, want %#v", got, m)
		}
	}
	plain := &LinkHello{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"b"}, Incarnation: 7}
	old := plain.AppendBody(nil)
	if adv := (&LinkHello{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"b"}, Incarnation: 7, Advertise: true}).AppendBody(nil); len(adv) != len(old)+1 || adv[len(old)] != 1 {
		t.Fatalf("an advertising hello is not the plain one plus flags 1: %x vs %x", adv, old)
	}
	for _, c := range []struct {
		name string
		body []byte
		want string
	}{
		{"zero flags", append(slicesClone(old), 0), "flags present but zero"},
		{"unknown flag", append(slicesClone(old), 4), "unknown flags 0x4"},
		{"truncated flags", append(slicesClone(old), 0x80), "link hello flags"},
		{"bytes after the flags", append(slicesClone(old), 1, 1), "trailing"},
	} {
		_, err := Decode(TypeLinkHello, c.body)
		if err == nil || CodeOf(err) != CodeMalformed || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want CodeMalformed containing %q", c.name, err, c.want)
		}
	}
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

// FuzzLinkHello feeds arbitrary bytes, seeded with link hellos with and
// without flags and Bloom parameters, to the frame splitter and decoder:
// never a panic, and whatever decodes re-encodes to a stable frame.
func FuzzLinkHello(f *testing.F) {
	bp := &BloomParams{M: 1024, K: 3, Hash: "bloom/v3-murmur3-double"}
	for _, m := range []Message{
		&LinkHello{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"a", "b"}, Incarnation: 3},
		&LinkHello{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"a", "b"}, Incarnation: 3, Advertise: true},
		&LinkHello{MinVersion: 1, MaxVersion: 2, Name: "c", Reach: []string{"c"}, Bloom: bp, Incarnation: 1 << 60, Advertise: true},
	} {
		f.Add(AppendFrame(nil, m))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFrame(t, data)
	})
}
