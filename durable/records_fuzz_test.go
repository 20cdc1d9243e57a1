package durable

import (
	"bytes"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// recordKinds are the decoders of the records durable keeps in its
// store, which recovery reads back after a crash: each is fuzzed by
// FuzzRecords on the input's first byte.
var recordKinds = []struct {
	name string
	// fixed decodes b and, when it succeeds, encodes the result again:
	// the re-encoding must decode to the same record (returned twice).
	fixed func(t *testing.T, b []byte) (first, again []byte, ok bool)
}{
	{"log", func(t *testing.T, b []byte) ([]byte, []byte, bool) {
		r, err := decodeLogRecord(b)
		if err != nil {
			return nil, nil, false
		}
		r2, err := decodeLogRecord(r.encode())
		if err != nil {
			t.Fatalf("log record %+v: its encoding does not decode: %v", r, err)
		}
		return r.encode(), r2.encode(), true
	}},
	{"pfs", func(t *testing.T, b []byte) ([]byte, []byte, bool) {
		r, err := decodePFSRecord(b)
		if err != nil {
			return nil, nil, false
		}
		r2, err := decodePFSRecord(r.encode())
		if err != nil {
			t.Fatalf("pfs record %+v: its encoding does not decode: %v", r, err)
		}
		return r.encode(), r2.encode(), true
	}},
	{"registry", func(t *testing.T, b []byte) ([]byte, []byte, bool) {
		s, err := decodeRegistry(7, b)
		if err != nil {
			return nil, nil, false
		}
		s2, err := decodeRegistry(7, encodeRegistry(s))
		if err != nil {
			t.Fatalf("registry record %+v: its encoding does not decode: %v", s, err)
		}
		return encodeRegistry(s), encodeRegistry(s2), true
	}},
	{"phb-meta", func(t *testing.T, b []byte) ([]byte, []byte, bool) {
		mark, lost, err := DecodePHBMeta(b)
		if err != nil {
			return nil, nil, false
		}
		m2, l2, err := DecodePHBMeta(encodeTicks(mark, lost))
		if err != nil {
			t.Fatalf("pubend meta %d %d: its encoding does not decode: %v", mark, lost, err)
		}
		return encodeTicks(mark, lost), encodeTicks(m2, l2), true
	}},
	{"shb-meta", func(t *testing.T, b []byte) ([]byte, []byte, bool) {
		ts, err := decodeTicks(b, 5)
		if err != nil {
			return nil, nil, false
		}
		ld, err := DecodeSHBMeta(b)
		if err != nil || ld != ts[0] {
			t.Fatalf("shb meta: DecodeSHBMeta = %d, %v; decodeTicks = %v", ld, err, ts)
		}
		ts2, err := decodeTicks(encodeTicks(ts...), 5)
		if err != nil {
			t.Fatalf("shb meta %v: its encoding does not decode: %v", ts, err)
		}
		return encodeTicks(ts...), encodeTicks(ts2...), true
	}},
}

// FuzzRecords feeds arbitrary bytes to the decoder of every kind of
// stored record (chosen by the first byte): a corrupt store must give an
// error, never a panic or a record that does not survive its own
// encoding.
func FuzzRecords(f *testing.F) {
	ev := match.MustEvent(match.Attr{Name: "price", Value: match.Int(10)}, match.Attr{Name: "symbol", Value: match.Str("X")})
	sub := &durableSub{id: "s1", filter: match.MustParse(`price > 5 && symbol == "X"`), start: CT{"p1": 3, "p2": 9}, roamed: true}
	seeds := [][]byte{
		logRecord{Publisher: "pub", Seq: 42, Event: ev}.encode(),
		pfsRecord{tick: 12, entries: []pfsEntry{{sid: 1, prev: 0}, {sid: 5, prev: 3}}}.encode(),
		encodeRegistry(sub),
		encodeTicks(100, 7),
		encodeTicks(1, 2, 3, 4, 5),
	}
	for kind, s := range seeds {
		f.Add(append([]byte{byte(kind)}, s...))
		f.Add(append([]byte{byte(kind)}, s[:len(s)/2]...))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		k := recordKinds[int(in[0])%len(recordKinds)]
		first, again, ok := k.fixed(t, in[1:])
		if ok && !bytes.Equal(first, again) {
			t.Fatalf("%s record is not a fixed point of decode and encode:\n%x\n%x", k.name, first, again)
		}
	})
}

// TestRecordSeedsDecode checks that every seed of FuzzRecords is a valid
// record of its kind, so the fuzzer starts from real records.
func TestRecordSeedsDecode(t *testing.T) {
	ev := match.MustEvent(match.Attr{Name: "a", Value: match.Str("b")})
	sub := &durableSub{id: "s", filter: match.MustParse(`a == "b"`), start: CT{"p": 1}}
	for i, b := range [][]byte{
		logRecord{Publisher: "p", Seq: 1, Event: ev}.encode(),
		pfsRecord{tick: 1, entries: []pfsEntry{{sid: 2, prev: 1}}}.encode(),
		encodeRegistry(sub),
		encodeTicks(1, 0),
		encodeTicks(1, 2, 3, 4, 5),
	} {
		if _, _, ok := recordKinds[i].fixed(t, b); !ok {
			t.Errorf("%s: a valid record does not decode", recordKinds[i].name)
		}
		if _, _, ok := recordKinds[i].fixed(t, b[:len(b)-1]); ok {
			t.Errorf("%s: a truncated record decodes", recordKinds[i].name)
		}
	}
}
