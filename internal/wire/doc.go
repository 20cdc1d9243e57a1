// Package wire owns Sift's wire protocol between routers and clients: the
// length-prefixed frame format, the messages carried in frames, and the
// compact binary encoding of events. docs/protocol.md describes the
// protocol, with test vectors that protocol_doc_test.go checks against
// the encoder.
//
// # Frames
//
// A frame is a 4-byte big-endian length L, then L bytes: one type byte and
// the message body. L counts the type byte, so 1 <= L <= the reader's
// maximum frame size (DefaultMaxFrame unless configured; never more than
// HardMaxFrame). Integers inside bodies are unsigned LEB128 varints
// (encoding/binary's Uvarint), signed ones zig-zag varints; strings and byte
// strings are a varint length followed by the bytes.
//
// # Messages
//
// The first frame on a connection's control stream is Hello (the client's
// range of protocol versions); the router answers Welcome (the version it
// chose) or Error(CodeVersion) and closes. The client then opens its data
// stream, whose first frame is Attach. Subscribe, Unsubscribe, Ack and Error
// travel on the control stream; Publish (client to router, batched) and
// Deliver (router to client, batched) on the data stream, so control never
// waits behind data.
//
// Router links (docs/protocol.md) use the same frames: the dialling and the
// accepting router each send LinkHello (versions, router name, the names
// reachable through it) first on the control stream; then Reach (the
// reachable set changed), Routes (a change to the filters forwarded on the
// link, or a Snapshot replacing them, numbered by session Gen and Seq) and
// RoutesAck (installed everywhere downstream, cumulative) travel on it.
//
// # Promises
//
// Every decoder returns an error, never panics, on any input: truncated,
// oversized, trailing bytes, unknown types, invalid attribute names,
// non-canonical attribute order or duplicates, invalid UTF-8, NaN or
// infinite floats, and counts larger than the bytes could hold. Decoding
// what Append wrote gives back an equal message. The fuzz targets check
// both.
//
// # Caveats
//
// Decoded byte slices (Deliver items' raw events) alias the frame body;
// callers that keep them must not reuse the body buffer.
package wire
