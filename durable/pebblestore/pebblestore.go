// Package pebblestore is the durable.Store of a real broker, on Pebble
// (CockroachDB's storage engine). A synced Apply commits its batch with
// pebble.Sync, so it returns once the batch and every batch committed
// before it are in the fsynced write-ahead log; Pebble groups concurrent
// synced commits into one fsync (group commit). Reads see every committed
// batch, synced or not.
//
// It is safe for concurrent use, as Pebble is; the durable state machines
// use it from one goroutine.
package pebblestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sift-pubsub/sift/durable"
)

// Store is a Pebble database used as a durable.Store.
type Store struct {
	db *pebble.DB
}

// memTableSize bounds each memtable (Pebble's default is 4 MiB). Most of
// what a broker writes is short-lived: the pubend's log records are
// range-deleted once released, a replica's raft entries once applied and
// compacted (durable/replica), and a flush drops the keys that a range
// deletion in the same memtable covers. A memtable that holds that
// window lets those keys cost one write-ahead log append and no sstable;
// a small one flushes them first, and compactions then rewrite them until
// their deletion catches up. Memtables start at 256 KiB and double only as
// they fill, so an idle broker does not hold the full size.
const memTableSize = 64 << 20

// Open opens (creating if needed) the database in dir on fs (nil: the
// operating system's file system).
func Open(dir string, fs vfs.FS) (*Store, error) {
	opts := &pebble.Options{Logger: quietLogger{}, MemTableSize: memTableSize}
	if fs != nil {
		opts.FS = fs
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("pebblestore: open %s: %w", dir, err)
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("pebblestore: close: %w", err)
	}
	return nil
}

// Get implements durable.Store.
func (s *Store) Get(key []byte) ([]byte, bool, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pebblestore: get %x: %w", key, err)
	}
	out := append([]byte(nil), v...)
	if err := closer.Close(); err != nil {
		return nil, false, fmt.Errorf("pebblestore: get %x: %w", key, err)
	}
	return out, true, nil
}

// Scan implements durable.Store.
func (s *Store) Scan(lo, hi []byte, fn func(key, val []byte) bool) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return fmt.Errorf("pebblestore: scan: %w", err)
	}
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return fmt.Errorf("pebblestore: scan %x: %w", it.Key(), err)
		}
		if !fn(it.Key(), v) {
			break
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("pebblestore: scan: %w", err)
	}
	return nil
}

// Apply implements durable.Store. Pebble's batch is sized for every op
// at once: grown op by op it copied a replica's batches (raft entries
// and applied state, tens of kilobytes) several times over.
func (s *Store) Apply(b *durable.Batch, sync bool) error {
	pb := s.db.NewBatchWithSize(batchSize(b))
	for _, op := range b.Ops {
		var err error
		switch op.Kind {
		case durable.OpSet:
			err = pb.Set(op.Key, op.Value, nil)
		case durable.OpDelete:
			err = pb.Delete(op.Key, nil)
		case durable.OpDeleteRange:
			err = pb.DeleteRange(op.Key, op.End, nil)
		default:
			err = fmt.Errorf("unknown op kind %d", op.Kind)
		}
		if err != nil {
			_ = pb.Close()
			return fmt.Errorf("pebblestore: batch: %w", err)
		}
	}
	opt := pebble.NoSync
	if sync {
		opt = pebble.Sync
	}
	if err := pb.Commit(opt); err != nil {
		_ = pb.Close()
		return fmt.Errorf("pebblestore: commit: %w", err)
	}
	return pb.Close()
}

// batchSize is the size of Pebble's encoding of b (its batch header, and
// per op a kind byte and the length-prefixed key and value or end key).
func batchSize(b *durable.Batch) int {
	n := batchHeader
	for _, op := range b.Ops {
		n += 1 + 2*binary.MaxVarintLen32 + len(op.Key) + len(op.Value) + len(op.End)
	}
	return n
}

// batchHeader is the size of a Pebble batch's header (sequence number
// and count).
const batchHeader = 12

// Flush makes every committed batch durable.
func (s *Store) Flush() error {
	if err := s.db.LogData(nil, pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: sync: %w", err)
	}
	return nil
}

// DiskUsage estimates the bytes on disk of the keys in [lo, hi).
func (s *Store) DiskUsage(lo, hi []byte) (uint64, error) {
	n, err := s.db.EstimateDiskUsage(lo, hi)
	if err != nil {
		return 0, fmt.Errorf("pebblestore: disk usage: %w", err)
	}
	return n, nil
}

// Size returns the bytes the database uses on disk.
func (s *Store) Size() uint64 { return s.db.Metrics().DiskSpaceUsage() }

// quietLogger drops Pebble's informational logs, sends its errors to slog
// and panics on fatal errors, as Pebble expects.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	slog.Error("pebble: " + fmt.Sprintf(format, args...))
}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}
