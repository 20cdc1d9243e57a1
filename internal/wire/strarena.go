package wire

import "unsafe"

// strArena hands out immutable strings copied into shared chunks, for
// borrowed decoding (DecodeBorrowedDeliver): a frame's string values cost
// their bytes, not a copy of the whole body, and a chunk serves frame
// after frame, so decoding allocates one chunk per arenaChunk bytes of
// string values instead of one body copy per frame.
//
// Every byte of a chunk is written once, by the append that hands it out,
// before any string aliases it, and never again (a value that does not fit
// starts a new chunk; append never reallocates one), so the strings are
// real Go strings: a caller may keep one for ever. A kept string keeps
// its chunk alive: at most arenaChunk bytes, however large the frame. The
// zero value is ready to use.
type strArena struct {
	chunk []byte // [0:len) handed out and immutable; [len:cap) free
}

const (
	// arenaChunk is the size of a chunk: a small-object size class, so a
	// chunk is cheap to allocate and a kept string pins little.
	arenaChunk = 16 << 10
	// arenaMax is the longest string carved from a chunk; a longer one
	// gets its own allocation (it costs that much anyway), so a chunk's
	// unused tail is at most arenaMax bytes, and a large value kept never
	// pins a chunk's neighbours nor they it.
	arenaMax = arenaChunk / 16
)

// str returns a string with the bytes of p, which the caller may then
// reuse.
func (a *strArena) str(p []byte) string {
	n := len(p)
	switch {
	case n == 0:
		return ""
	case n > arenaMax:
		return string(p)
	case cap(a.chunk)-len(a.chunk) < n:
		a.chunk = make([]byte, 0, arenaChunk)
	}
	off := len(a.chunk)
	a.chunk = append(a.chunk, p...)
	return unsafe.String(&a.chunk[off], n)
}
