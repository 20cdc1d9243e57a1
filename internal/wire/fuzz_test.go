package wire

import (
	"bytes"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

func seedFrames() [][]byte {
	ev := match.MustEvent(
		match.Attr{Name: "price", Value: match.MustFloat(9.5)},
		match.Attr{Name: "symbol", Value: match.Str("IBM")},
		match.Attr{Name: "urgent", Value: match.Bool(true)},
		match.Attr{Name: "volume", Value: match.Int(-100)},
	)
	msgs := []Message{
		&Hello{MinVersion: 1, MaxVersion: 1, Role: RoleClient, Name: "c"},
		&Welcome{Version: 1, Name: "r", MaxFrame: 1 << 20, MaxSubscriptions: 10},
		&Attach{Version: 1},
		&Subscribe{ID: 1, Filter: `symbol == "IBM"`},
		&Unsubscribe{ID: 1},
		&Publish{Seq: 3, Events: []match.Event{ev, ev}},
		&PublishDict{Publish{Seq: 3, Events: []match.Event{ev, ev}}},
		&Deliver{Items: []DeliverItem{{Subs: []uint64{1, 2}, Event: ev}}},
		&Ack{About: TypePublish, ID: 3},
		&Error{Code: CodeBadFilter, About: TypeSubscribe, Ref: 1, Msg: "col 3: bad"},
		&LinkHello{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"a", "b"}, Incarnation: 0x0123456789abcdef},
		&Reach{Names: []string{"b", "c"}},
		&Reach{Names: []string{"b", "c"}, Epochs: []uint64{0, 1 << 40}},
		&LinkHello{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"a", "b"}, Incarnation: 5, Clock: 3 << 24, Epoch: 4<<24 | 9, ReachEpochs: []uint64{3 << 24, 0}},
		&Routes{Gen: 2, Seq: 1, Snapshot: true, Add: []string{`price > 5`}},
		&Routes{Gen: 2, Seq: 2, Remove: []string{`price > 5`}, Add: []string{`price > 1`, `x == 1`}},
		&RoutesAck{Gen: 2, Seq: 2},
		&Heartbeat{Padding: HeartbeatPadding},
		&Replica{From: "r1", To: "r2", Data: []byte("raft")},
		&Heartbeat{},
		&SubscribeBatch{First: 7, Filters: []string{`symbol == "IBM"`, `price < 10`}},
		&Ack{About: TypeSubscribeBatch, ID: 7},
	}
	var out [][]byte
	for _, m := range msgs {
		out = append(out, AppendFrame(nil, m))
	}
	return out
}

// FuzzFrame feeds arbitrary bytes to the frame splitter and the message
// decoder: they must never panic, and whatever decodes must re-encode to a
// frame that decodes to the same bytes again.
func FuzzFrame(f *testing.F) {
	for _, s := range seedFrames() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		typ, body, once, ok := checkFrame(t, data)
		if !ok {
			return
		}
		shared := EventDecoder{ShareStrings: true}
		if ms, err := shared.Decode(typ, body); err != nil || !bytes.Equal(AppendFrame(nil, ms), once) {
			t.Fatalf("decoding with shared strings differs: %v", err)
		}
		// Decoding again with the same (now warm) decoders: the name
		// cache and the attribute slab must not change the result.
		var copying EventDecoder
		copying.Decode(typ, body)
		for _, d := range []*EventDecoder{&copying, &shared} {
			if m, err := d.Decode(typ, body); err != nil || !bytes.Equal(AppendFrame(nil, m), once) {
				t.Fatalf("decoding again with a warm decoder differs: %v", err)
			}
		}
		if typ == TypePublish {
			if m, err := shared.DecodeOwnedPublish(bytes.Clone(body)); err != nil || !bytes.Equal(AppendFrame(nil, m), once) {
				t.Fatalf("DecodeOwnedPublish differs: %v", err)
			}
		}
	})
}

// checkFrame splits and decodes data as a frame: a refusal must carry a
// protocol code, and whatever decodes must re-encode to a frame that
// decodes to the same bytes again. It returns the frame's type and body
// and the re-encoding, ok when data decoded.
func checkFrame(t *testing.T, data []byte) (typ Type, body, once []byte, ok bool) {
	typ, body, _, err := SplitFrame(data, 1<<16)
	if err != nil {
		return 0, nil, nil, false
	}
	m, err := Decode(typ, body)
	if err != nil {
		if CodeOf(err) == CodeInternal {
			t.Fatalf("decode error without a protocol code: %v", err)
		}
		return 0, nil, nil, false
	}
	once = AppendFrame(nil, m)
	typ2, body2, _, err := SplitFrame(once, HardMaxFrame)
	if err != nil {
		t.Fatalf("re-split: %v", err)
	}
	m2, err := Decode(typ2, body2)
	if err != nil {
		t.Fatalf("re-decode %T: %v", m, err)
	}
	if twice := AppendFrame(nil, m2); !bytes.Equal(once, twice) {
		t.Fatalf("not stable:\n%x\n%x", once, twice)
	}
	return typ, body, once, true
}

// FuzzEvent feeds arbitrary bytes to the event decoder: never a panic, and
// an accepted event re-encodes to exactly the input (the encoding is
// canonical apart from varint forms, which Uvarint rejects when overlong).
func FuzzEvent(f *testing.F) {
	f.Add(AppendEvent(nil, match.MustEvent(match.Attr{Name: "a", Value: match.Str("x")})))
	f.Add([]byte{2, 1, 'a', tagInt, 2, 1, 'b', tagBool, 1})
	f.Add([]byte{1, 1, 'a', tagFloat, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		var warm EventDecoder
		warm.DecodeEvent(data)
		e, err := DecodeEvent(data)
		if again, errAgain := warm.DecodeEvent(data); (err == nil) != (errAgain == nil) || err == nil && !again.Equal(e) {
			t.Fatalf("a warm decoder differs: %v %v, cold %v %v", again, errAgain, e, err)
		}
		if err != nil {
			return
		}
		again, err := DecodeEvent(AppendEvent(nil, e))
		if err != nil || !again.Equal(e) {
			t.Fatalf("round trip of %v: %v %v", e, again, err)
		}
	})
}
