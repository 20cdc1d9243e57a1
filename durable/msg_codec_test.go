package durable

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

func genCT(t *rapid.T, label string) CT {
	n := rapid.IntRange(0, 3).Draw(t, label+"n")
	c := CT{}
	for range n {
		c[rapid.SampledFrom([]string{"p", "p2", "q"}).Draw(t, label+"p")] = Tick(rapid.Int64().Draw(t, label+"t"))
	}
	return c
}

func genFilter(t *rapid.T, label string) match.Filter {
	text := rapid.SampledFrom([]string{`*`, `k < 4`, `sym == "IBM" && k >= 3`, `x != 1.5`}).Draw(t, label)
	f, err := match.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func genMsg(t *rapid.T) Msg {
	str := func(l string) string { return rapid.StringMatching(`[a-z0-9/]{0,5}`).Draw(t, l) }
	tick := func(l string) Tick { return Tick(rapid.Int64().Draw(t, l)) }
	u64 := func(l string) uint64 { return rapid.Uint64().Draw(t, l) }
	m := Msg{Kind: MsgKind(rapid.IntRange(1, int(MsgClaim)).Draw(t, "kind")),
		Pubend: str("pubend"), Tick: tick("tick"), Prev: tick("prev"), From: tick("from"), To: tick("to"),
		Event: genEvent(t), Sub: str("sub"), Filter: genFilter(t, "filter"), HasCT: rapid.Bool().Draw(t, "hasct"),
		CT: genCT(t, "ct"), Session: u64("session"), Publisher: str("publisher"), Seq: u64("seq"),
		Epoch: u64("epoch"), Version: u64("version"), Nonce: u64("nonce"),
		Filtered: rapid.Bool().Draw(t, "filtered"), Reason: rapid.String().Draw(t, "reason"), Origin: str("origin")}
	for range rapid.IntRange(0, 2).Draw(t, "nranges") {
		m.Ranges = append(m.Ranges, Range{tick("rf"), tick("rt")})
	}
	for range rapid.IntRange(0, 2).Draw(t, "nreports") {
		m.Reports = append(m.Reports, Report{SHB: str("shb"), Tr: tick("tr"), Td: tick("td")})
	}
	for range rapid.IntRange(0, 2).Draw(t, "nsubs") {
		m.Subs = append(m.Subs, SubFilter{Sub: str("ssub"), Filter: genFilter(t, "sfilter")})
	}
	for range rapid.IntRange(0, 2).Draw(t, "nstamps") {
		m.Stamps = append(m.Stamps, Stamp{Node: str("snode"), Epoch: u64("se"), Version: u64("sv")})
	}
	for range rapid.IntRange(0, 2).Draw(t, "nclaims") {
		m.Claims = append(m.Claims, Claim{Sub: str("csub"), CT: genCT(t, "cct"),
			Holds: rapid.Bool().Draw(t, "holds"), Reply: rapid.Bool().Draw(t, "reply")})
	}
	return m
}

// TestMsgCodecRoundTrip checks that a decoded message encodes to the same
// bytes and prints the same, and that every strict prefix is refused.
func TestMsgCodecRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genMsg(t)
		b := AppendMsg(nil, m)
		got, err := DecodeMsg(b)
		if err != nil {
			t.Fatalf("decode %v: %v", m, err)
		}
		if again := AppendMsg(nil, got); !bytes.Equal(again, b) || got.String() != m.String() {
			t.Fatalf("round trip %v -> %v", m, got)
		}
		if got.Kind != m.Kind || got.HasCT != m.HasCT || got.Filtered != m.Filtered || got.Seq != m.Seq ||
			got.Tick != m.Tick || !got.Filter.Equal(m.Filter) || len(got.CT) != len(m.CT) {
			t.Fatalf("fields differ: %+v -> %+v", m, got)
		}
		cut := rapid.IntRange(0, len(b)-1).Draw(t, "cut")
		if _, err := DecodeMsg(b[:cut]); err == nil {
			t.Fatalf("prefix %d of %d bytes of %v decoded", cut, len(b), m)
		}
	})
}

// TestDecodeMsgRejects lists corrupt inputs that must fail.
func TestDecodeMsgRejects(t *testing.T) {
	good := AppendMsg(nil, Msg{Kind: MsgAck, Sub: "s1", CT: CT{"p": 7}})
	dupCT := append(binary.AppendUvarint([]byte{msgCodecV1, byte(MsgAck)}, fCT), 2, 1, 'p', 2, 1, 'p', 4)
	for name, b := range map[string][]byte{
		"empty":    {},
		"version":  {9, byte(MsgAck), 0},
		"kind 0":   {msgCodecV1, 0, 0},
		"kind big": {msgCodecV1, byte(MsgClaim) + 1, 0},
		"bits":     {msgCodecV1, byte(MsgAck), 0x80, 0x80, 0x80, 0x80, 0x10},
		"filter":   append(binary.AppendUvarint([]byte{msgCodecV1, byte(MsgInstall)}, fFilter), 3, 'k', ' ', '<'),
		"dup ct":   dupCT,
		"trailing": append(bytes.Clone(good), 0),
		"count":    {msgCodecV1, byte(MsgNack), byte(fRanges), 100, 1},
	} {
		if _, err := DecodeMsg(b); err == nil {
			t.Errorf("%s: %x decoded without error", name, b)
		}
	}
	if m, err := DecodeMsg(good); err != nil || m.Sub != "s1" || m.CT["p"] != 7 {
		t.Errorf("good message: %v, %v", m, err)
	}
}

// FuzzDecodeMsg checks that the decoder never panics and that whatever it
// accepts survives a round trip.
func FuzzDecodeMsg(f *testing.F) {
	f.Add(AppendMsg(nil, Msg{Kind: MsgData, Pubend: "p", Tick: 9, Prev: 3,
		Event: match.MustEvent(match.Attr{Name: "k", Value: match.Int(2)})}))
	f.Add(AppendMsg(nil, Msg{Kind: MsgInstallAck, Sub: "s", CT: CT{"p": 4, "q": 1},
		Stamps: []Stamp{{Node: "r1", Epoch: 2, Version: 5}}}))
	f.Add(AppendMsg(nil, Msg{Kind: MsgFilters, Subs: []SubFilter{{Sub: "s", Filter: match.MustParse(`k < 4`)}}, Nonce: 3}))
	f.Add(AppendMsg(nil, Msg{Kind: MsgClaim, Origin: "shb2", Claims: []Claim{{Sub: "s", CT: CT{"p": 10}, Holds: true}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMsg(b)
		if err != nil {
			return
		}
		enc := AppendMsg(nil, m)
		again, err := DecodeMsg(enc)
		if err != nil || !bytes.Equal(AppendMsg(nil, again), enc) {
			t.Fatalf("%x decodes to %v which does not round-trip: %v", b, m, err)
		}
	})
}
