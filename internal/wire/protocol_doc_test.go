package wire

import (
	"bytes"
	"encoding/hex"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// protocolDoc is the protocol's documentation, whose test vectors
// TestProtocolVectors checks against the encoder.
const protocolDoc = "../../docs/protocol.md"

// vectorEvent is the event of the vectors that carry one.
func vectorEvent(t testing.TB) match.Event {
	ev, err := match.ParseEventJSON([]byte(`{"symbol": "IBM", "price": 12.5, "qty": -3, "live": true}`))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// protocolVectors are the messages of docs/protocol.md's test vectors, by
// vector name.
func protocolVectors(t testing.TB) map[string]Message {
	ev := vectorEvent(t)
	return map[string]Message{
		"hello":           &Hello{MinVersion: 1, MaxVersion: 1, Role: RoleClient, Name: "c1"},
		"welcome":         &Welcome{Version: 1, Name: "r1", MaxFrame: 1 << 20, MaxSubscriptions: 1000},
		"attach":          &Attach{Version: 1},
		"subscribe":       &Subscribe{ID: 7, Filter: `price > 10`},
		"unsubscribe":     &Unsubscribe{ID: 7},
		"subscribe-batch": &SubscribeBatch{First: 8, Filters: []string{`price > 10`, `symbol == "IBM"`}},
		"ack":             &Ack{About: TypeSubscribe, ID: 7},
		"error":           &Error{Code: CodeBadFilter, About: TypeSubscribe, Ref: 7, Msg: "bad"},
		"publish":         &Publish{Seq: 1, Events: []match.Event{ev}},
		"publish-dict":    &PublishDict{Publish{Seq: 1, Events: []match.Event{ev, ev}}},
		"publish-compact": &PublishCompact{Publish{Seq: 1, Events: []match.Event{ev, ev}}},
		"deliver":         &Deliver{Items: []DeliverItem{{Subs: []uint64{7, 9}, Event: ev}}},
		"link-hello":      &LinkHello{MinVersion: 1, MaxVersion: 1, Name: "r1", Reach: []string{"r1"}, Incarnation: 0x0102030405060708},
		"reach":           &Reach{Names: []string{"r1", "r2"}},
		"link-hello-answer": &LinkHello{MinVersion: 1, MaxVersion: 1, Name: "r2", Reach: []string{"r1", "r2"}, Incarnation: 0x0102030405060708,
			Clock: 1 << 24, Epoch: 2<<24 | 5, ReachEpochs: []uint64{1 << 24, 0}},
		"reach-epochs": &Reach{Names: []string{"r1", "r2"}, Epochs: []uint64{0, 2<<24 | 5}},
		"routes":       &Routes{Gen: 1, Seq: 2, Remove: []string{`price > 5`}, Add: []string{`price > 10`}},
		"routes-ack":   &RoutesAck{Gen: 1, Seq: 2},
		"link-publish": &LinkPublish{Publish: Publish{Seq: 3, Events: []match.Event{ev}}, Witness: []uint64{0x1122334455667788}},
		"heartbeat":    &Heartbeat{Padding: 2},
		"replica":      &Replica{From: "r1", To: "r3", Data: []byte{1, 2, 3}},
		"assist-offer": &AssistOffer{Modes: AssistRTO | AssistFF},
		"rto-query":    &RTOQuery{Q: 5, Filter: `price > 10`, Filters: []string{`price > 0`, `price > 20`}},
		"rto-answer":   &RTOAnswer{Q: 5, Up: []uint64{1}, Down: []uint64{2}, Overlap: []uint64{3}},
		"ff-fixed":     &FFFixed{Gen: 1, Filters: []string{`price > 0`}},
		"ff-claim":     &FFClaim{Gen: 1, Sub: 7, Covering: []uint64{1}},
		"place-claim":  &PlaceClaim{First: 8, Parents: []uint64{7}},
		"advertise":    &Advertise{ID: 4, Filter: `symbol == "IBM"`},
		"unadvertise":  &Unadvertise{ID: 4},
		"advert-ack":   &AdvertAck{About: TypeAdvertise, ID: 4},
		"adverts":      &Adverts{Gen: 1, Seq: 3, Snapshot: true, Add: []string{`symbol == "IBM"`}},
		"bloom-terms":  &BloomTerms{Snapshot: true, Add: []BloomTerm{{Qual: `symbol == "IBM"`, C: `price > 10`}}},
		"bloom-publish": &BloomPublish{Seq: 4, Events: []BloomEvent{
			{Summary: []uint64{1<<3 | 1<<40}, Event: AppendEvent(nil, ev), Witness: 0x1122334455667788},
			{Exact: true, Event: AppendEvent(nil, ev)},
		}},
	}
}

// vectorBlock is a test vector in the doc: a fenced block whose info
// string is "vector NAME", holding the frame in hex.
var vectorBlock = regexp.MustCompile("(?s)```vector ([a-z-]+)\n(.*?)```")

// TestProtocolVectors checks every test vector of docs/protocol.md: the
// encoder writes exactly the documented bytes, they decode to a message
// that encodes the same again, and the doc and this test name the same
// vectors.
func TestProtocolVectors(t *testing.T) {
	doc, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatal(err)
	}
	want := protocolVectors(t)
	seen := map[string]bool{}
	for _, m := range vectorBlock.FindAllSubmatch(doc, -1) {
		name := string(m[1])
		if seen[name] {
			t.Errorf("vector %s twice in %s", name, protocolDoc)
		}
		seen[name] = true
		msg, ok := want[name]
		if !ok {
			t.Errorf("%s has vector %s, which this test does not know", protocolDoc, name)
			continue
		}
		frame, err := hex.DecodeString(strings.Join(strings.Fields(string(m[2])), ""))
		if err != nil {
			t.Errorf("vector %s: %v", name, err)
			continue
		}
		if got := AppendFrame(nil, msg); !bytes.Equal(got, frame) {
			t.Errorf("vector %s: the encoder writes\n%s\nthe doc says\n%s", name, hexBlock(got), hexBlock(frame))
			continue
		}
		typ, body, rest, err := SplitFrame(frame, HardMaxFrame)
		if err != nil || len(rest) > 0 {
			t.Errorf("vector %s: split: %v (%d bytes after)", name, err, len(rest))
			continue
		}
		var dec EventDecoder
		got, err := dec.Decode(typ, body)
		if err != nil {
			t.Errorf("vector %s: decode: %v", name, err)
			continue
		}
		if again := AppendFrame(nil, got); !bytes.Equal(again, frame) {
			t.Errorf("vector %s: decoded and encoded again:\n%s", name, hexBlock(again))
		}
	}
	var missing []string
	for name := range want {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		t.Errorf("%s lacks vector %s:\n```vector %s\n%s```", protocolDoc, name, name, hexBlock(AppendFrame(nil, want[name])))
	}
}

// hexBlock renders b as the doc writes vectors: 16 bytes a line.
func hexBlock(b []byte) string {
	var s strings.Builder
	for i := 0; i < len(b); i += 16 {
		line := b[i:min(i+16, len(b))]
		for j, c := range line {
			if j > 0 {
				s.WriteByte(' ')
			}
			s.WriteString(hex.EncodeToString([]byte{c}))
		}
		s.WriteByte('\n')
	}
	return s.String()
}
