package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Type is a frame's message type.
type Type byte

// The message types of protocol version 1.
const (
	TypeHello       Type = 1
	TypeWelcome     Type = 2
	TypeAttach      Type = 3
	TypeSubscribe   Type = 4
	TypeUnsubscribe Type = 5
	TypePublish     Type = 6
	TypeDeliver     Type = 7
	TypeAck         Type = 8
	TypeError       Type = 9
	// Router links (link.go).
	TypeLinkHello Type = 10
	TypeReach     Type = 11
	TypeRoutes    Type = 12
	TypeRoutesAck Type = 13
	// Bloom forwarding on router links (bloom.go).
	TypeBloomTerms   Type = 14
	TypeBloomPublish Type = 15
	// Durable delivery, client and link control streams (durable.go).
	TypeDurable Type = 16
	// Client-assisted placement, RTO and FF (rto.go).
	TypeAssistOffer Type = 17
	TypeRTOQuery    Type = 18
	TypeRTOAnswer   Type = 19
	TypeFFFixed     Type = 20
	TypeFFClaim     Type = 21
	// Padded keep-alive on links and client connections (heartbeat.go).
	TypeHeartbeat Type = 22
	// Advertisements (advert.go).
	TypeAdverts     Type = 23
	TypeAdvertise   Type = 24
	TypeUnadvertise Type = 25
	TypeAdvertAck   Type = 26
	// Exact forwarding's events on router links (linkpublish.go).
	TypeLinkPublish Type = 27
	// Bulk subscribe on client connections (subbatch.go).
	TypeSubscribeBatch Type = 28
	// Replicated pubends' raft messages on router links (replica.go).
	TypeReplica Type = 29
	// Publish with a per-frame dictionary of attribute names, client
	// version VersionPublishDict (publishdict.go).
	TypePublishDict Type = 30
	// Claimed placement on client connections (claim.go), from VersionClaim.
	TypePlaceClaim Type = 31
	// Publish with per-frame dictionaries of names and string values and
	// decimal numbers, client version VersionCompact (publishcompact.go).
	TypePublishCompact Type = 32
)

var typeNames = [...]string{
	TypeHello:          "hello",
	TypeWelcome:        "welcome",
	TypeAttach:         "attach",
	TypeSubscribe:      "subscribe",
	TypeUnsubscribe:    "unsubscribe",
	TypePublish:        "publish",
	TypeDeliver:        "deliver",
	TypeAck:            "ack",
	TypeError:          "error",
	TypeLinkHello:      "link-hello",
	TypeReach:          "reach",
	TypeRoutes:         "routes",
	TypeRoutesAck:      "routes-ack",
	TypeBloomTerms:     "bloom-terms",
	TypeBloomPublish:   "bloom-publish",
	TypeDurable:        "durable",
	TypeAssistOffer:    "assist-offer",
	TypeRTOQuery:       "rto-query",
	TypeRTOAnswer:      "rto-answer",
	TypeFFFixed:        "ff-fixed",
	TypeFFClaim:        "ff-claim",
	TypeHeartbeat:      "heartbeat",
	TypeAdverts:        "adverts",
	TypeAdvertise:      "advertise",
	TypeUnadvertise:    "unadvertise",
	TypeAdvertAck:      "advert-ack",
	TypeLinkPublish:    "link-publish",
	TypeSubscribeBatch: "subscribe-batch",
	TypeReplica:        "replica",
	TypePublishDict:    "publish-dict",
	TypePlaceClaim:     "place-claim",
	TypePublishCompact: "publish-compact",
}

// String returns the type's name, e.g. "publish".
func (t Type) String() string {
	if t != 0 && int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("type-%d", byte(t))
}

// Known reports whether t is a message type of this protocol version.
func (t Type) Known() bool { return t >= TypeHello && t <= TypePublishCompact }

const (
	// HeaderLen is the length prefix: 4 bytes, big-endian.
	HeaderLen = 4
	// DefaultMaxFrame is the default maximum frame length (type byte and
	// body).
	DefaultMaxFrame = 1 << 20
	// HardMaxFrame is the largest maximum a reader may be configured with.
	HardMaxFrame = 16 << 20
)

// AppendFrame appends a frame holding m: the length prefix, the type byte
// and the body.
func AppendFrame(b []byte, m Message) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, byte(m.Type()))
	b = m.AppendBody(b)
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-HeaderLen))
	return b
}

// FrameReader reads frames from a stream, refusing any longer than its
// maximum before reading the body.
type FrameReader struct {
	r   *bufio.Reader
	max int
	hdr [HeaderLen]byte
	buf []byte // ReadFrameReuse's body buffer
}

// readBuffer is the size of a FrameReader's buffer. It serves small
// frames (many per read from the stream); a frame's body beyond what is
// buffered is read from the stream straight into the body, bufio.Reader
// bypassing its buffer for a read at least as large as it, so a large
// frame is copied once, not twice (into the buffer, then out of it), but
// for its first readBuffer bytes at most.
const readBuffer = 4 << 10

// NewFrameReader returns a reader of frames of at most max bytes (type and
// body); max <= 0 means DefaultMaxFrame, and it is capped at HardMaxFrame.
func NewFrameReader(r io.Reader, max int) *FrameReader {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	max = min(max, HardMaxFrame)
	return &FrameReader{r: bufio.NewReaderSize(r, readBuffer), max: max}
}

// SetMax changes the largest frame the reader accepts from the next frame
// on, as NewFrameReader's max does.
func (fr *FrameReader) SetMax(max int) {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	fr.max = min(max, HardMaxFrame)
}

// ReadFrame reads the next frame and returns its type and a newly allocated
// body, which the caller may keep. At a clean end of stream between frames
// it returns io.EOF; a frame cut short is io.ErrUnexpectedEOF. A length of
// zero or over the maximum is a *ProtocolError (CodeMalformed or
// CodeFrameTooLarge) and nothing more is read.
func (fr *FrameReader) ReadFrame() (Type, []byte, error) {
	n, err := fr.header()
	if err != nil {
		return 0, nil, err
	}
	return fr.body(make([]byte, n))
}

// ReadFrameReuse is ReadFrame into a buffer the reader keeps and reuses:
// the body is valid only until the next read. It suits a caller that
// decodes each frame at once into values that do not alias the body (an
// EventDecoder without ShareStrings copies what it keeps), and saves an
// allocation per frame. The buffer grows to the largest frame read.
func (fr *FrameReader) ReadFrameReuse() (Type, []byte, error) {
	n, err := fr.header()
	if err != nil {
		return 0, nil, err
	}
	if cap(fr.buf) < n {
		fr.buf = make([]byte, n)
	}
	return fr.body(fr.buf[:n])
}

// header reads a frame's length prefix and checks it.
func (fr *FrameReader) header() (int, error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return 0, err
	}
	n := binary.BigEndian.Uint32(fr.hdr[:])
	if n == 0 {
		return 0, malformed("empty frame (length 0)")
	}
	if uint64(n) > uint64(fr.max) {
		return 0, Errorf(CodeFrameTooLarge, "frame of %d bytes exceeds the maximum of %d", n, fr.max)
	}
	return int(n), nil
}

// body fills buf (the type byte and the body) from the stream.
func (fr *FrameReader) body(buf []byte) (Type, []byte, error) {
	if _, err := io.ReadFull(fr.r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, fmt.Errorf("frame body: %w", err)
	}
	return Type(buf[0]), buf[1:], nil
}

// ReadMessage reads the next frame and decodes it.
func (fr *FrameReader) ReadMessage() (Message, error) {
	t, body, err := fr.ReadFrame()
	if err != nil {
		return nil, err
	}
	return Decode(t, body)
}

// SplitFrame decodes one frame at the start of b (as a datagram or a
// buffered stream would hold it), with max as in NewFrameReader. It returns
// the type, the body (aliasing b) and the rest of b.
func SplitFrame(b []byte, max int) (Type, []byte, []byte, error) {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	if len(b) < HeaderLen {
		return 0, nil, b, malformed("frame header: %d of %d bytes", len(b), HeaderLen)
	}
	n := binary.BigEndian.Uint32(b)
	switch {
	case n == 0:
		return 0, nil, b, malformed("empty frame (length 0)")
	case uint64(n) > uint64(min(max, HardMaxFrame)):
		return 0, nil, b, Errorf(CodeFrameTooLarge, "frame of %d bytes exceeds the maximum of %d", n, min(max, HardMaxFrame))
	case uint64(n) > uint64(len(b)-HeaderLen):
		return 0, nil, b, malformed("frame of %d bytes, only %d present", n, len(b)-HeaderLen)
	}
	frame := b[HeaderLen : HeaderLen+int(n)]
	return Type(frame[0]), frame[1:], b[HeaderLen+int(n):], nil
}
