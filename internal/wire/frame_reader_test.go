package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"pgregory.net/rapid"
)

// TestFrameReaderChunking: whatever sizes the stream's reads return, and
// whether a frame's body goes through the buffer or, past readBuffer
// bytes, straight from the stream, ReadFrame and ReadFrameReuse give back
// the frames SplitFrame finds in the whole stream, then a clean io.EOF; a
// stream cut inside a frame is io.ErrUnexpectedEOF.
func TestFrameReaderChunking(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var stream []byte
		for range rapid.IntRange(0, 12).Draw(t, "frames") {
			n := rapid.SampledFrom([]int{1, 10, readBuffer - 1, readBuffer, readBuffer + 1, 70 << 10}).Draw(t, "size")
			stream = binary.BigEndian.AppendUint32(stream, uint32(1+n))
			stream = append(stream, byte(TypeDeliver))
			stream = append(stream, bytes.Repeat([]byte{byte(n)}, n)...)
		}
		cut := rapid.Bool().Draw(t, "cut") && len(stream) > 0
		data := stream
		if cut {
			data = stream[:rapid.IntRange(0, len(stream)-1).Draw(t, "at")]
		}
		wrap := rapid.SampledFrom([]func(io.Reader) io.Reader{
			func(r io.Reader) io.Reader { return r },
			iotest.OneByteReader, iotest.HalfReader, iotest.DataErrReader,
		}).Draw(t, "reader")
		reuse := rapid.Bool().Draw(t, "reuse")
		fr := NewFrameReader(wrap(bytes.NewReader(data)), HardMaxFrame)
		rest := data
		for i := 0; ; i++ {
			read := fr.ReadFrame
			if reuse {
				read = fr.ReadFrameReuse
			}
			typ, body, err := read()
			wantTyp, wantBody, next, werr := SplitFrame(rest, HardMaxFrame)
			if werr != nil { // the stream ends here, cleanly or not
				want := io.EOF
				if len(rest) > 0 {
					want = io.ErrUnexpectedEOF
				}
				if !errors.Is(err, want) {
					t.Fatalf("frame %d: %v, want %v (%d bytes left)", i, err, want, len(rest))
				}
				return
			}
			if err != nil || typ != wantTyp || !bytes.Equal(body, wantBody) {
				t.Fatalf("frame %d: %v, %d bytes, %v; want %v, %d bytes", i, typ, len(body), err, wantTyp, len(wantBody))
			}
			rest = next
		}
	})
}

// BenchmarkReadFrameReuse reads 32 KiB Deliver frames (a subscriber's
// batches under load) from a stream, reporting CPU per frame byte.
//
//	go test -run XXX -bench ReadFrameReuse ./internal/wire
func BenchmarkReadFrameReuse(b *testing.B) {
	const size, frames = 32 << 10, 64
	var stream []byte
	for range frames {
		stream = binary.BigEndian.AppendUint32(stream, size)
		stream = append(stream, byte(TypeDeliver))
		stream = append(stream, make([]byte, size-1)...)
	}
	r := bytes.NewReader(stream)
	fr := NewFrameReader(r, 0)
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		r.Reset(stream)
		for range frames {
			if _, _, err := fr.ReadFrameReuse(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
