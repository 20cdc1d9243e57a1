package wire

import (
	"reflect"
	"strings"
	"testing"
)

// TestLinkEpochs: a hello's clock, epoch and reach epochs, and a Reach's
// epochs, survive the round trip (with and without advertisements); a
// hello or Reach whose epochs are all zero is byte for byte the one written
// before epochs existed; epochs cut short or followed by more bytes are
// refused as malformed.
func TestLinkEpochs(t *testing.T) {
	for _, m := range []Message{
		&LinkHello{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"a", "b", "c"}, Incarnation: 9, Clock: 7, ReachEpochs: []uint64{5, 0, 7}},
		&LinkHello{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"b"}, Incarnation: 9, Advertise: true, Clock: 7, Epoch: 8, ReachEpochs: []uint64{0}},
		&LinkHello{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"b"}, Incarnation: 9, Epoch: 1 << 63, ReachEpochs: []uint64{0}},
		&Reach{Names: []string{"a", "b"}, Epochs: []uint64{1 << 50, 0}},
	} {
		got, err := Decode(m.Type(), m.AppendBody(nil))
		if err != nil {
			t.Fatalf("decode %+v: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip: got %#v, want %#v", got, m)
		}
	}
	plainHello := &LinkHello{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"a", "b"}, Incarnation: 9}
	zeroHello := *plainHello
	zeroHello.ReachEpochs = []uint64{0, 0}
	if a, b := plainHello.AppendBody(nil), zeroHello.AppendBody(nil); string(a) != string(b) {
		t.Fatalf("a hello with zero epochs is %x, want the plain %x", b, a)
	}
	if a, b := (&Reach{Names: []string{"a"}}).AppendBody(nil), (&Reach{Names: []string{"a"}, Epochs: []uint64{0}}).AppendBody(nil); string(a) != string(b) {
		t.Fatalf("a reach with zero epochs is %x, want the plain %x", b, a)
	}
	hello := (&LinkHello{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"a", "b"}, Incarnation: 9, Clock: 3, ReachEpochs: []uint64{2, 0}}).AppendBody(nil)
	reach := (&Reach{Names: []string{"a", "b"}, Epochs: []uint64{2, 300}}).AppendBody(nil)
	for _, c := range []struct {
		name string
		t    Type
		body []byte
		want string
	}{
		{"hello: one reach epoch missing", TypeLinkHello, hello[:len(hello)-1], "link hello reach epochs"},
		{"hello: a byte after the epochs", TypeLinkHello, append(slicesClone(hello), 0), "trailing"},
		{"hello: epochs flag without epochs", TypeLinkHello, append(slicesClone(plainHello.AppendBody(nil)), linkFlagEpochs), "link hello clock"},
		{"reach: one epoch missing", TypeReach, reach[:len(reach)-2], "reach epochs"},
		{"reach: a byte after the epochs", TypeReach, append(slicesClone(reach), 1), "trailing"},
	} {
		_, err := Decode(c.t, c.body)
		if err == nil || CodeOf(err) != CodeMalformed || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want CodeMalformed containing %q", c.name, err, c.want)
		}
	}
}
