package wire

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// skipStream is a stream of events with the same names, every value kind
// among them, as a router decodes them: after the first event every
// attribute a Wanted set drops takes skipAttr's fast path.
func skipStream() []match.Event {
	var evs []match.Event
	for i := range 3 {
		evs = append(evs, match.MustEvent(
			match.Attr{Name: "account", Value: match.Str(strings.Repeat("a", 130+i))}, // a two-byte length
			match.Attr{Name: "price", Value: match.MustFloat(101.25 + float64(i))},
			match.Attr{Name: "seq", Value: match.Int(int64(1000 * i))},
			match.Attr{Name: "short", Value: match.Bool(i%2 == 1)},
			match.Attr{Name: "side", Value: match.Str("bü")},
			match.Attr{Name: "symbol", Value: match.Str("SYM")},
			match.Attr{Name: "volume", Value: match.Int(int64(-7 * i))},
		))
	}
	return evs
}

// TestSkipAttrIsFullDecode damages, one at a time, every byte of the last
// event of a stream whose earlier events warmed the decoder's caches
// (so that its dropped attributes take skipAttr's path), with values that
// break lengths, tags, varints, floats, bools, UTF-8 and name order, and
// checks that decoding with Wanted refuses exactly what the full decoder
// refuses, with the same error, and otherwise keeps exactly the wanted
// attributes of the full decode.
func TestSkipAttrIsFullDecode(t *testing.T) {
	evs := skipStream()
	body := (&Publish{Seq: 1, Events: evs}).AppendBody(nil)
	last := len(body) - len(AppendEvent(nil, evs[len(evs)-1]))
	repl := []byte{0, 1, 2, 3, 4, 5, 0x7f, 0x80, 0xc3, 0xf0, 0xff, 'a', 'z'}
	sets := []*Wanted{NewWanted([]string{"symbol"}), NewWanted([]string{"price", "short"}), NewWanted(nil)}
	refused := 0
	for at := last; at < len(body); at++ {
		for _, x := range append(repl, body[at]+1, body[at]-1) {
			if x == body[at] {
				continue
			}
			damaged := bytes.Clone(body)
			damaged[at] = x
			var full EventDecoder
			want, wantErr := decodeWith(&full, true, damaged)
			if wantErr != nil {
				refused++
			}
			for _, w := range sets {
				d := EventDecoder{Wanted: w}
				if _, err := decodeWith(&d, true, body); err != nil { // warm: same names at the same positions
					t.Fatal(err)
				}
				got, err := decodeWith(&d, true, damaged)
				if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
					t.Fatalf("byte %d = %#x, wanted %v: error %v, full decode %v", at, x, w, err, wantErr)
				}
				for i := range want {
					if r := restrict(want[i], w); !got[i].Equal(r) {
						t.Fatalf("byte %d = %#x, wanted %v: event %d = %v, want %v", at, x, w, i, got[i], r)
					}
				}
			}
		}
	}
	if refused == 0 {
		t.Fatal("no damaged body was refused: the test exercises nothing")
	}
}

// TestSkipAttrFloats: skipAttr's finiteness check on the bits agrees with
// the full decoder on the special floats (infinities, NaNs, zeros,
// subnormals, the largest finite).
func TestSkipAttrFloats(t *testing.T) {
	for _, bits := range []uint64{
		math.Float64bits(math.Inf(1)), math.Float64bits(math.Inf(-1)), math.Float64bits(math.NaN()),
		0x7ff0000000000001, 0xfff8000000000000, 0, 1 << 63, 1, math.Float64bits(math.MaxFloat64),
		math.Float64bits(-math.MaxFloat64), 0x7fefffffffffffff,
	} {
		ev := func(f uint64) []byte {
			b := []byte{2, 1, 'a', tagFloat}
			b = append(b, byte(f), byte(f>>8), byte(f>>16), byte(f>>24), byte(f>>32), byte(f>>40), byte(f>>48), byte(f>>56))
			return append(b, 1, 'b', tagBool, 1)
		}
		_, wantErr := DecodeEvent(ev(bits))
		d := EventDecoder{Wanted: NewWanted([]string{"b"})}
		if _, err := d.DecodeEvent(ev(0)); err != nil { // warm: a is known not wanted
			t.Fatal(err)
		}
		_, err := d.DecodeEvent(ev(bits))
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("float bits %#x: error %v, full decode %v", bits, err, wantErr)
		}
	}
}

// FuzzEventSkip: for a warm-up event and an event (arbitrary bytes each)
// and a wanted set, a decoder that has decoded the warm-up first (so that
// the second event's attributes at the same positions with the same names
// take skipAttr's path) accepts exactly what the full decoder accepts,
// with the same error, and keeps exactly the wanted attributes of the full
// decode.
func FuzzEventSkip(f *testing.F) {
	evs := skipStream()
	f.Add(AppendEvent(nil, evs[0]), AppendEvent(nil, evs[1]), "symbol")
	f.Add(AppendEvent(nil, evs[0]), []byte{2, 7, 'a', 'c', 'c', 'o', 'u', 'n', 't', tagInt, 0x80}, "price")
	f.Add([]byte{2, 1, 'a', tagFloat, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'b', tagBool, 1},
		[]byte{2, 1, 'a', tagFloat, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f, 1, 'b', tagBool, 1}, "b")
	f.Add([]byte{2, 1, 'b', tagBool, 0, 1, 'c', tagBool, 0}, []byte{2, 1, 'b', tagBool, 0, 1, 'a', tagBool, 0}, "c")
	f.Fuzz(func(t *testing.T, warm, data []byte, names string) {
		w := NewWanted(strings.Fields(names))
		full, fullErr := DecodeEvent(data)
		d := EventDecoder{Wanted: w}
		d.DecodeEvent(warm) // an error is fine: the caches hold what was read
		got, err := d.DecodeEvent(data)
		if (err == nil) != (fullErr == nil) || err != nil && err.Error() != fullErr.Error() {
			t.Fatalf("errors differ: wanted %v: %v, full: %v", w, err, fullErr)
		}
		if err == nil && !got.Equal(restrict(full, w)) {
			t.Fatalf("wanted %v: %v, full decode %v", w, got, full)
		}
	})
}
