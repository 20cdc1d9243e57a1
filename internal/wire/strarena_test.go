package wire

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"
	"weak"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestArenaStringsImmutable: every string the arena handed out keeps its
// bytes while the caller reuses its buffer and the arena hands out more
// (filling chunks, starting new ones, and giving long values their own
// memory).
func TestArenaStringsImmutable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var a strArena
		var got, want []string
		buf := make([]byte, 0, 2*arenaMax)
		for range rapid.IntRange(1, 200).Draw(t, "values") {
			n := rapid.IntRange(0, 2*arenaMax).Draw(t, "len")
			c := byte(rapid.IntRange('a', 'z').Draw(t, "byte"))
			buf = append(buf[:0], strings.Repeat(string(c), n)...)
			got = append(got, a.str(buf))
			want = append(want, string(buf))
			clear(buf[:cap(buf)]) // the caller reuses its buffer
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("value %d changed: %q, want %q", i, got[i], want[i])
			}
		}
	})
}

// TestArenaLongValuesOwnMemory: a value longer than arenaMax is not carved
// from the chunk (kept, it pins only itself), and the chunk goes on after
// it.
func TestArenaLongValuesOwnMemory(t *testing.T) {
	var a strArena
	short := a.str([]byte("abc"))
	long := a.str([]byte(strings.Repeat("x", arenaMax+1)))
	next := a.str([]byte("def"))
	chunk := unsafe.SliceData(a.chunk)
	inChunk := func(s string) bool {
		off := uintptr(unsafe.Pointer(unsafe.StringData(s))) - uintptr(unsafe.Pointer(chunk))
		return off < uintptr(cap(a.chunk))
	}
	if !inChunk(short) || !inChunk(next) || inChunk(long) {
		t.Fatalf("in the chunk: short %v, next %v, long %v; want true, true, false", inChunk(short), inChunk(next), inChunk(long))
	}
}

// TestBorrowedDeliverDropsOldChunks: once a borrowed frame's callbacks
// have returned and nobody kept one of its strings, the arena chunk they
// were cut from becomes garbage as soon as the decoder has moved on to
// another chunk: the decoder keeps only its current chunk.
func TestBorrowedDeliverDropsOldChunks(t *testing.T) {
	var d EventDecoder
	body := func(s string) []byte {
		return (&Deliver{Items: []DeliverItem{{Subs: []uint64{1}, Event: match.MustEvent(match.Attr{Name: "note", Value: match.Str(s)})}}}).AppendBody(nil)
	}
	var first weak.Pointer[byte]
	if err := d.DecodeBorrowedDeliver(body("first"), func(_ []uint64, e match.Event) {
		first = weak.Make(unsafe.StringData(e.At(0).Value.AsString()))
	}); err != nil {
		t.Fatal(err)
	}
	filler := body(strings.Repeat("y", arenaMax))
	for range 2 * arenaChunk / arenaMax { // two chunks' worth
		if err := d.DecodeBorrowedDeliver(filler, func([]uint64, match.Event) {}); err != nil {
			t.Fatal(err)
		}
	}
	if reachableAfterGC(first) {
		t.Fatal("an old arena chunk is still reachable through the decoder")
	}
	runtime.KeepAlive(&d)
}
