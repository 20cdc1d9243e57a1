package pebblestore

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"pgregory.net/rapid"

	"github.com/sift-pubsub/sift/durable"
)

// TestBatchSizeHoldsTheBatch: the size Apply allocates Pebble's batch
// with holds its whole encoding, whatever the ops (so the batch never
// grows and copies itself while it is filled), and Apply writes what the
// batch says. Fails when batchSize leaves out a part of an op (the end
// key of a range deletion, a length prefix) or the header.
func TestBatchSizeHoldsTheBatch(t *testing.T) {
	s := open(t, vfs.NewMem())
	defer s.Close()
	rapid.Check(t, func(t *rapid.T) {
		b := &durable.Batch{}
		key := rapid.SliceOfN(rapid.Byte(), 1, 300)
		for range rapid.IntRange(0, 20).Draw(t, "ops") {
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 0:
				b.Set(key.Draw(t, "key"), rapid.SliceOfN(rapid.Byte(), 0, 70_000).Draw(t, "value"))
			case 1:
				b.Delete(key.Draw(t, "key"))
			case 2:
				b.DeleteRange(key.Draw(t, "lo"), key.Draw(t, "hi"))
			}
		}
		pb := s.db.NewBatch()
		defer pb.Close()
		for _, op := range b.Ops {
			var err error
			switch op.Kind {
			case durable.OpSet:
				err = pb.Set(op.Key, op.Value, nil)
			case durable.OpDelete:
				err = pb.Delete(op.Key, nil)
			case durable.OpDeleteRange:
				err = pb.DeleteRange(op.Key, op.End, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if got, bound := len(pb.Repr()), batchSize(b); got > bound {
			t.Fatalf("the batch encodes in %d bytes, sized for %d", got, bound)
		}
		if err := s.Apply(b, false); err != nil {
			t.Fatal(err)
		}
	})
}
