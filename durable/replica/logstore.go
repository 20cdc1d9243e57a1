package replica

import (
	"fmt"

	"github.com/sift-pubsub/sift/durable"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// logStore is the raft log of one replica, kept in memory (from the
// compaction point up) and in the store: it implements raft.Storage from
// memory, and every change returns the writes that make it durable, for
// the Ready batch that carries it.
type logStore struct {
	pubend  string
	hard    *pb.HardState
	conf    *pb.ConfState // of the compaction point (InitialState)
	compIdx uint64        // entries at or below are compacted
	compTrm uint64
	ents    []*pb.Entry // ents[i].Index == compIdx+1+i
	// snapshot makes a snapshot of the applied state on demand.
	snapshot func() (*pb.Snapshot, error)
}

// loadLog reads the log of pubend from store.
func loadLog(pubend string, store durable.Store) (*logStore, error) {
	l := &logStore{pubend: pubend, hard: &pb.HardState{}, conf: &pb.ConfState{}}
	if v, ok, err := store.Get(prefix(pubend, tableHard)); err != nil {
		return nil, fmt.Errorf("raft log: hard state: %w", err)
	} else if ok {
		if err := proto.Unmarshal(v, l.hard); err != nil {
			return nil, fmt.Errorf("raft log: hard state: %w", err)
		}
	}
	if v, ok, err := store.Get(prefix(pubend, tableCompact)); err != nil {
		return nil, fmt.Errorf("raft log: compaction point: %w", err)
	} else if ok {
		cp, err := decodePoint(v)
		if err != nil {
			return nil, fmt.Errorf("raft log: compaction point: %w", err)
		}
		l.compIdx, l.compTrm, l.conf = cp.index, cp.term, cp.conf
	}
	pre := prefix(pubend, tableEntry)
	var derr error
	err := store.Scan(pre, prefixEnd(pre), func(k, v []byte) bool {
		e := &pb.Entry{}
		if derr = proto.Unmarshal(v, e); derr != nil {
			return false
		}
		if want := l.compIdx + 1 + uint64(len(l.ents)); e.GetIndex() != want {
			derr = fmt.Errorf("entry %d where %d was expected", e.GetIndex(), want)
			return false
		}
		l.ents = append(l.ents, e)
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return nil, fmt.Errorf("raft log: entries: %w", err)
	}
	return l, nil
}

// InitialState implements raft.Storage.
func (l *logStore) InitialState() (*pb.HardState, *pb.ConfState, error) {
	return proto.CloneOf(l.hard), proto.CloneOf(l.conf), nil
}

// Entries implements raft.Storage.
func (l *logStore) Entries(lo, hi, maxSize uint64) ([]*pb.Entry, error) {
	if lo <= l.compIdx {
		return nil, raft.ErrCompacted
	}
	if hi > l.lastIndex()+1 {
		return nil, fmt.Errorf("raft log: entries [%d,%d) beyond the last index %d", lo, hi, l.lastIndex())
	}
	var out []*pb.Entry
	size := uint64(0)
	for i := lo; i < hi; i++ {
		e := l.ents[i-l.compIdx-1]
		size += uint64(proto.Size(e))
		if len(out) > 0 && size > maxSize {
			break
		}
		out = append(out, e)
	}
	return out, nil
}

// Term implements raft.Storage.
func (l *logStore) Term(i uint64) (uint64, error) {
	switch {
	case i < l.compIdx:
		return 0, raft.ErrCompacted
	case i == l.compIdx:
		return l.compTrm, nil
	case i > l.lastIndex():
		return 0, raft.ErrUnavailable
	}
	return l.ents[i-l.compIdx-1].GetTerm(), nil
}

// LastIndex implements raft.Storage.
func (l *logStore) LastIndex() (uint64, error) { return l.lastIndex(), nil }

func (l *logStore) lastIndex() uint64 { return l.compIdx + uint64(len(l.ents)) }

// FirstIndex implements raft.Storage.
func (l *logStore) FirstIndex() (uint64, error) { return l.compIdx + 1, nil }

// Snapshot implements raft.Storage: the applied state, made on demand.
func (l *logStore) Snapshot() (*pb.Snapshot, error) {
	if l.snapshot == nil {
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	return l.snapshot()
}

// append adds entries, replacing any conflicting suffix, and adds their
// writes to b.
func (l *logStore) append(ents []*pb.Entry, b *durable.Batch) error {
	if len(ents) == 0 {
		return nil
	}
	first := ents[0].GetIndex()
	if first <= l.compIdx || first > l.lastIndex()+1 {
		return fmt.Errorf("raft log: append at %d, log holds (%d,%d]", first, l.compIdx, l.lastIndex())
	}
	for i := first; i <= l.lastIndex(); i++ {
		b.Delete(entryKey(l.pubend, i))
	}
	l.ents = append(l.ents[:first-l.compIdx-1], ents...)
	for _, e := range ents {
		v, err := proto.Marshal(e)
		if err != nil {
			return fmt.Errorf("raft log: entry %d: %w", e.GetIndex(), err)
		}
		b.Set(entryKey(l.pubend, e.GetIndex()), v)
	}
	return nil
}

// setHard records the hard state.
func (l *logStore) setHard(hs *pb.HardState, b *durable.Batch) error {
	if err := l.writeHard(hs, b); err != nil {
		return err
	}
	l.hard = proto.CloneOf(hs)
	return nil
}

// writeHard writes a hard state to the batch without recording it as
// raft's (ReadyInFlight's, whose own append is deferred).
func (l *logStore) writeHard(hs *pb.HardState, b *durable.Batch) error {
	v, err := proto.Marshal(hs)
	if err != nil {
		return fmt.Errorf("raft log: hard state: %w", err)
	}
	b.Set(prefix(l.pubend, tableHard), v)
	return nil
}

// compact drops the entries up to index (at most the last one), keeping
// its term, with conf the configuration as of index.
func (l *logStore) compact(index uint64, conf *pb.ConfState, b *durable.Batch) error {
	if index <= l.compIdx {
		return nil
	}
	if index > l.lastIndex() {
		return fmt.Errorf("raft log: compact to %d beyond the last index %d", index, l.lastIndex())
	}
	term := l.ents[index-l.compIdx-1].GetTerm()
	b.DeleteRange(entryKey(l.pubend, l.compIdx+1), entryKey(l.pubend, index+1))
	l.ents = append([]*pb.Entry(nil), l.ents[index-l.compIdx:]...)
	l.compIdx, l.compTrm, l.conf = index, term, proto.CloneOf(conf)
	b.Set(prefix(l.pubend, tableCompact), point{index: index, term: term, conf: conf}.encode())
	return nil
}

// restore replaces the whole log by a snapshot's point.
func (l *logStore) restore(meta *pb.SnapshotMetadata, b *durable.Batch) {
	pre := prefix(l.pubend, tableEntry)
	b.DeleteRange(pre, prefixEnd(pre))
	l.ents = nil
	l.compIdx, l.compTrm, l.conf = meta.GetIndex(), meta.GetTerm(), proto.CloneOf(meta.GetConfState())
	b.Set(prefix(l.pubend, tableCompact), point{index: l.compIdx, term: l.compTrm, conf: l.conf}.encode())
}
