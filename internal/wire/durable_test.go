package wire

import (
	"bytes"
	"testing"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

func genTick(t *rapid.T, label string) durable.Tick {
	return durable.Tick(rapid.Int64Range(0, 1<<52).Draw(t, label))
}

var durableFilters = []string{`*`, `price > 10`, `symbol == "IBM" && price < 5`, `x exists`}

// genDurable draws a durable message with random fields set (the wire
// format does not check which fields a kind uses, only filters and
// events).
func genDurable(t *rapid.T) *Durable {
	kind := durable.MsgKind(rapid.IntRange(int(durable.MsgData), int(maxDurableKind)).Draw(t, "kind"))
	m := durable.Msg{Kind: kind}
	name := rapid.StringMatching(`[a-z0-9]{1,8}`)
	opt := func(label string) bool { return rapid.Bool().Draw(t, label) }
	if opt("pubend") {
		m.Pubend = name.Draw(t, "pubend")
	}
	m.Tick, m.Prev = genTick(t, "tick"), genTick(t, "prev")
	m.From, m.To = genTick(t, "from"), genTick(t, "to")
	if carriesEvent(kind) {
		m.Event = genEvent(t, "event")
	}
	for range rapid.IntRange(0, 3).Draw(t, "ranges") {
		m.Ranges = append(m.Ranges, durable.Range{From: genTick(t, "rf"), To: genTick(t, "rt")})
	}
	for range rapid.IntRange(0, 3).Draw(t, "reports") {
		m.Reports = append(m.Reports, durable.Report{SHB: name.Draw(t, "shb"), Tr: genTick(t, "tr"), Td: genTick(t, "td")})
	}
	if opt("sub") {
		m.Sub = name.Draw(t, "sub")
	}
	if carriesFilter(kind) {
		m.Filter = match.MustParse(rapid.SampledFrom(durableFilters).Draw(t, "filter"))
	}
	m.HasCT = opt("hasct")
	for range rapid.IntRange(0, 3).Draw(t, "ct") {
		if m.CT == nil {
			m.CT = durable.CT{}
		}
		m.CT[name.Draw(t, "ctp")] = genTick(t, "ctt")
	}
	m.Session, m.Seq = rapid.Uint64().Draw(t, "session"), rapid.Uint64().Draw(t, "seq")
	if opt("publisher") {
		m.Publisher = name.Draw(t, "publisher")
	}
	for range rapid.IntRange(0, 2).Draw(t, "subs") {
		m.Subs = append(m.Subs, durable.SubFilter{Sub: name.Draw(t, "ss"),
			Filter: match.MustParse(rapid.SampledFrom(durableFilters).Draw(t, "sf"))})
	}
	m.Epoch, m.Version, m.Nonce = rapid.Uint64().Draw(t, "epoch"), rapid.Uint64().Draw(t, "version"), rapid.Uint64().Draw(t, "nonce")
	m.Filtered = opt("filtered")
	if opt("reason") {
		m.Reason = rapid.StringN(1, 30, -1).Draw(t, "reason")
	}
	if opt("origin") {
		m.Origin = name.Draw(t, "origin")
	}
	m.Born = genTick(t, "born")
	if kind == durable.MsgRefused && opt("notleader") {
		m.NotLeader = true
		if opt("leader") {
			m.Leader = name.Draw(t, "leader")
		}
	}
	m.Refetch = kind == durable.MsgNack && opt("refetch")
	for range rapid.IntRange(0, 2).Draw(t, "stamps") {
		m.Stamps = append(m.Stamps, durable.Stamp{Node: name.Draw(t, "sn"), Epoch: rapid.Uint64().Draw(t, "se"), Version: rapid.Uint64().Draw(t, "sv")})
	}
	for range rapid.IntRange(0, 2).Draw(t, "claims") {
		c := durable.Claim{Sub: name.Draw(t, "cs"), Holds: opt("holds"), Reply: opt("reply")}
		for range rapid.IntRange(0, 2).Draw(t, "cct") {
			if c.CT == nil {
				c.CT = durable.CT{}
			}
			c.CT[name.Draw(t, "cp")] = genTick(t, "ctick")
		}
		m.Claims = append(m.Claims, c)
	}
	return &Durable{Msg: m}
}

// TestDurableRoundTrip: every message decodes to the same fields and
// re-encodes to the same bytes.
func TestDurableRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genDurable(t)
		frame := AppendFrame(nil, in)
		typ, body, rest, err := SplitFrame(frame, HardMaxFrame)
		if err != nil || len(rest) != 0 || typ != TypeDurable {
			t.Fatalf("split: %v %v", typ, err)
		}
		m, err := Decode(typ, body)
		if err != nil {
			t.Fatalf("decode %v: %v", in.Msg, err)
		}
		out := m.(*Durable).Msg
		if out.String() != in.Msg.String() || !out.Event.Equal(in.Msg.Event) || !out.Filter.Equal(in.Msg.Filter) ||
			out.HasCT != in.Msg.HasCT || out.CT.String() != in.Msg.CT.String() || len(out.Subs) != len(in.Msg.Subs) ||
			out.Session != in.Msg.Session || out.Nonce != in.Msg.Nonce || out.Filtered != in.Msg.Filtered ||
			out.Reason != in.Msg.Reason || len(out.Ranges) != len(in.Msg.Ranges) || len(out.Reports) != len(in.Msg.Reports) ||
			out.NotLeader != in.Msg.NotLeader || out.Leader != in.Msg.Leader || out.Refetch != in.Msg.Refetch {
			t.Fatalf("round trip:\n in %+v\nout %+v", in.Msg, out)
		}
		for i := range out.Ranges {
			if out.Ranges[i] != in.Msg.Ranges[i] {
				t.Fatalf("range %d: %v != %v", i, out.Ranges[i], in.Msg.Ranges[i])
			}
		}
		if out.Origin != in.Msg.Origin || out.Born != in.Msg.Born || len(out.Stamps) != len(in.Msg.Stamps) || len(out.Claims) != len(in.Msg.Claims) {
			t.Fatalf("origin, stamps or claims differ:\n in %+v\nout %+v", in.Msg, out)
		}
		for i := range out.Stamps {
			if out.Stamps[i] != in.Msg.Stamps[i] {
				t.Fatalf("stamp %d: %v != %v", i, out.Stamps[i], in.Msg.Stamps[i])
			}
		}
		for i, c := range out.Claims {
			ic := in.Msg.Claims[i]
			if c.Sub != ic.Sub || c.Holds != ic.Holds || c.Reply != ic.Reply || c.CT.String() != ic.CT.String() {
				t.Fatalf("claim %d: %+v != %+v", i, c, ic)
			}
		}
		for i := range out.Reports {
			if out.Reports[i] != in.Msg.Reports[i] {
				t.Fatalf("report %d: %v != %v", i, out.Reports[i], in.Msg.Reports[i])
			}
		}
		if again := AppendFrame(nil, m); !bytes.Equal(again, frame) {
			t.Fatalf("re-encoding differs")
		}
	})
}

// TestDurableBadInput: malformed bodies are refused with CodeMalformed.
func TestDurableBadInput(t *testing.T) {
	good := (&Durable{Msg: durable.Msg{Kind: durable.MsgAck, Sub: "s", CT: durable.CT{"a": 1, "b": 2}}}).AppendBody(nil)
	cases := map[string][]byte{
		"empty":                  {},
		"unknown kind":           {0, 0},
		"kind too large":         {byte(maxDurableKind) + 1, 0},
		"unknown field":          {byte(durable.MsgAck), 0x80, 0x80, 0x80, 0x01},
		"install without filter": {byte(durable.MsgInstall), 0},
		"ack with event":         {byte(durable.MsgAck), dfEvent, 0},
		"truncated":              good[:len(good)-1],
	}
	// A CT whose pubends are out of order, written by hand.
	ct := []byte{byte(durable.MsgAck)}
	ct = append(ct, encodeUvarint(dfCT)...)
	ct = append(ct, 2, 1, 'b', 2, 1, 'a', 2)
	cases["unsorted ct"] = ct
	emptyName := []byte{byte(durable.MsgAck)}
	emptyName = append(emptyName, encodeUvarint(dfSub)...)
	cases["empty sub"] = append(emptyName, 0)
	badFilter := []byte{byte(durable.MsgInstall)}
	badFilter = append(badFilter, encodeUvarint(dfFilter)...)
	cases["bad filter"] = append(badFilter, 3, 'x', ' ', '>')
	for name, body := range cases {
		if _, err := Decode(TypeDurable, body); err == nil || CodeOf(err) != CodeMalformed {
			t.Errorf("%s: got %v, want a malformed error", name, err)
		}
	}
	if _, err := Decode(TypeDurable, good); err != nil {
		t.Fatalf("good body refused: %v", err)
	}
}

func encodeUvarint(v uint64) []byte {
	var b []byte
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// FuzzDurable feeds arbitrary bodies to the durable decoder: never a
// panic, refusals are protocol errors, and what decodes re-encodes
// stably.
func FuzzDurable(f *testing.F) {
	ev := match.MustEvent(match.Attr{Name: "price", Value: match.Int(3)})
	for _, m := range []durable.Msg{
		{Kind: durable.MsgData, Pubend: "p", Tick: 10, Prev: 4, Event: ev},
		{Kind: durable.MsgSilence, Pubend: "p", From: 1, To: 9, Filtered: true, Epoch: 2, Version: 3},
		{Kind: durable.MsgNack, Pubend: "p", Ranges: []durable.Range{{From: 1, To: 2}}},
		{Kind: durable.MsgNack, Pubend: "p", Ranges: []durable.Range{{From: 1, To: 2}, {From: 5, To: 9}}, Refetch: true},
		{Kind: durable.MsgRelease, Pubend: "p", Reports: []durable.Report{{SHB: "s", Tr: 1, Td: 2}}},
		{Kind: durable.MsgRelease, Pubend: "p", Reports: []durable.Report{{SHB: "s", Tr: 1, Td: 2}}, Born: 5},
		{Kind: durable.MsgResume, Sub: "s", Filter: match.MustParse(`price > 1`), HasCT: true, CT: durable.CT{"p": 3}, Session: 7},
		{Kind: durable.MsgFilters, Subs: []durable.SubFilter{{Sub: "s", Filter: match.MustParse(`*`)}}, Nonce: 1},
		{Kind: durable.MsgPublish, Publisher: "x", Seq: 1, Event: ev},
		{Kind: durable.MsgRefused, Sub: "s", Reason: "no"},
		{Kind: durable.MsgRefused, Pubend: "p", Publisher: "x", Reason: "not leader: (leader: b)", NotLeader: true, Leader: "b"},
		{Kind: durable.MsgRefused, Pubend: "p", Reason: "not leader: (leader: unknown yet)", NotLeader: true},
		{Kind: durable.MsgInstallAck, Sub: "s", CT: durable.CT{"p": 1}, Stamps: []durable.Stamp{{Node: "r", Epoch: 1, Version: 2}}, Epoch: 3, Version: 4},
		{Kind: durable.MsgClaim, Claims: []durable.Claim{{Sub: "s", CT: durable.CT{"p": 4}, Holds: true}}},
		{Kind: durable.MsgHosts, Origin: "r1", Version: 7, Pubends: []string{"a", "r1"}},
		{Kind: durable.MsgSilence, Pubend: "p", From: 1, To: 2, Filtered: true, Origin: "r"},
	} {
		f.Add((&Durable{Msg: m}).AppendBody(nil))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := Decode(TypeDurable, body)
		if err != nil {
			if CodeOf(err) != CodeMalformed {
				t.Fatalf("refusal without the malformed code: %v", err)
			}
			return
		}
		once := m.AppendBody(nil)
		m2, err := Decode(TypeDurable, once)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if twice := m2.AppendBody(nil); !bytes.Equal(once, twice) {
			t.Fatalf("not stable:\n%x\n%x", once, twice)
		}
	})
}

// TestDurableLeaderFields: the not-leader fields decode only on a
// refusal, and a leader only with the not-leader mark; a decoder of
// version 1 would refuse their bits, which is why routers strip them for
// such clients.
func TestDurableLeaderFields(t *testing.T) {
	ok := (&Durable{Msg: durable.Msg{Kind: durable.MsgRefused, Pubend: "p", NotLeader: true, Leader: "b"}}).AppendBody(nil)
	m, err := Decode(TypeDurable, ok)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(*Durable).Msg; !got.NotLeader || got.Leader != "b" {
		t.Fatalf("decoded %+v", got)
	}
	for _, bad := range []durable.Msg{
		{Kind: durable.MsgPubAck, Pubend: "p", Seq: 1, NotLeader: true},
		{Kind: durable.MsgHelloAck, Pubend: "p", NotLeader: true, Leader: "b"},
		{Kind: durable.MsgRefused, Pubend: "p", Leader: "b"},
	} {
		if _, err := Decode(TypeDurable, (&Durable{Msg: bad}).AppendBody(nil)); CodeOf(err) != CodeMalformed {
			t.Errorf("%+v: decode error %v, want malformed", bad, err)
		}
	}
}

// TestDurableRefetchField: the refetch mark decodes on a nack and is
// refused on any other kind.
func TestDurableRefetchField(t *testing.T) {
	ok := (&Durable{Msg: durable.Msg{Kind: durable.MsgNack, Pubend: "p", Ranges: []durable.Range{{From: 3, To: 9}}, Refetch: true}}).AppendBody(nil)
	m, err := Decode(TypeDurable, ok)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(*Durable).Msg; !got.Refetch || len(got.Ranges) != 1 {
		t.Fatalf("decoded %+v", got)
	}
	bad := durable.Msg{Kind: durable.MsgSilence, Pubend: "p", From: 1, To: 2, Refetch: true}
	if _, err := Decode(TypeDurable, (&Durable{Msg: bad}).AppendBody(nil)); CodeOf(err) != CodeMalformed {
		t.Errorf("%+v: decode error %v, want malformed", bad, err)
	}
}
