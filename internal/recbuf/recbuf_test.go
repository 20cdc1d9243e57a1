package recbuf

import (
	"errors"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	var e Encoder
	e.Byte(7)
	e.Uvarint(1 << 40)
	e.Varint(-12345)
	e.U64(0xfeedface)
	e.Str("durable")
	e.Bytes([]byte{1, 2, 3})
	d := Decoder{B: e.B}
	if b, u, v, w, s, bs := d.Byte(), d.Uvarint(), d.Varint(), d.U64(), d.Str(), d.Bytes(); b != 7 || u != 1<<40 || v != -12345 || w != 0xfeedface || s != "durable" || string(bs) != "\x01\x02\x03" {
		t.Fatalf("read %d %d %d %x %q %v", b, u, v, w, s, bs)
	}
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
}

// TestShortAndHostile: every prefix of a record fails with a sticky error
// and zero values; a length beyond the bytes left is refused before
// anything is allocated; trailing bytes are an error.
func TestShortAndHostile(t *testing.T) {
	var e Encoder
	e.Uvarint(300)
	e.Str("abc")
	e.U64(1)
	for n := range len(e.B) {
		d := Decoder{B: e.B[:n]}
		d.Uvarint()
		d.Str()
		d.U64()
		if d.Done() == nil {
			t.Fatalf("prefix of %d bytes decoded", n)
		}
		if d.Byte() != 0 || d.Str() != "" {
			t.Fatal("reads after an error returned values")
		}
	}
	d := Decoder{B: []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 'x'}}
	if d.Str() != "" || d.Err == nil {
		t.Fatal("a 4 GiB length was accepted")
	}
	if d := (Decoder{B: []byte{0}}); d.Done() == nil {
		t.Fatal("a trailing byte was accepted")
	}
	if d := (Decoder{B: []byte{0x80}}); d.Uvarint() != 0 || !errors.Is(d.Err, ErrShort) {
		t.Fatalf("a cut varint: %v", d.Err)
	}
}

// TestView: View reads what Bytes reads, as a slice of the input (no
// copy, capacity cut at its end so an append cannot overwrite what
// follows), nil for an empty string as Bytes gives, and fails on a length
// beyond the bytes left like Bytes.
func TestView(t *testing.T) {
	var e Encoder
	e.Bytes([]byte("abc"))
	e.Bytes(nil)
	e.Byte(9)
	d, c := Decoder{B: e.B}, Decoder{B: e.B}
	v, empty, last := d.View(), d.View(), d.Byte()
	if want := c.Bytes(); string(v) != string(want) || empty != nil || c.Bytes() != nil || last != 9 {
		t.Fatalf("view %q, then %v and %d", v, empty, last)
	}
	if &v[0] != &e.B[1] || cap(v) != len(v) {
		t.Fatalf("view is not the input's bytes (cap %d)", cap(v))
	}
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
	if d := (Decoder{B: []byte{5, 'x'}}); d.View() != nil || !errors.Is(d.Done(), d.Err) || d.Err == nil {
		t.Fatal("a length beyond the bytes left was viewed")
	}
}
