package wire

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestAppendCheckedEventIsCheckThenAppend: for random events, some with
// strings that are not UTF-8 and some with more than MaxEventAttrs
// attributes, appended after random bytes, AppendCheckedEvent gives what
// CheckEvent then AppendEvent give: the same bytes when CheckEvent
// accepts, else the same error and b unchanged.
func TestAppendCheckedEventIsCheckThenAppend(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var e match.Event
		if rapid.IntRange(0, 19).Draw(t, "huge") == 0 {
			attrs := make([]match.Attr, MaxEventAttrs+rapid.IntRange(0, 2).Draw(t, "over"))
			for i := range attrs {
				attrs[i] = match.Attr{Name: fmt.Sprintf("a%04d", i), Value: match.Int(int64(i))}
			}
			e = match.MustEvent(attrs...)
		} else {
			e = genEvent(t, "e")
			if rapid.Bool().Draw(t, "bad") && e.Len() > 0 { // a string that is not UTF-8
				attrs := make([]match.Attr, e.Len())
				for i := range attrs {
					attrs[i] = e.At(i)
				}
				i := rapid.IntRange(0, len(attrs)-1).Draw(t, "at")
				attrs[i].Value = match.Str(rapid.StringN(0, 3, -1).Draw(t, "pre") + string([]byte{rapid.ByteRange(0x80, 0xff).Draw(t, "bad")}))
				e = match.MustEvent(attrs...)
			}
		}
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 5).Draw(t, "prefix")
		got, err := AppendCheckedEvent(bytes.Clone(prefix), e)
		wantErr := CheckEvent(e)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("error %v, CheckEvent %v", err, wantErr)
		}
		want := prefix
		if wantErr == nil {
			want = AppendEvent(bytes.Clone(prefix), e)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("bytes %x, want %x (error %v)", got, want, err)
		}
	})
}
