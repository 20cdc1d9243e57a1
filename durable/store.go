package durable

import "bytes"

// Store is a broker's ordered key-value storage. Reads see every applied
// write, synced or not; Apply with sync set returns only once the batch and
// every batch applied before it are durable. A batch is atomic: after a
// crash it is there whole or not at all, and if it is lost so is every
// batch applied after it.
type Store interface {
	// Get returns the value stored under key.
	Get(key []byte) (val []byte, ok bool, err error)
	// Scan calls fn for each key in [lo, hi) in ascending order, until fn
	// returns false. fn must not keep key or val.
	Scan(lo, hi []byte, fn func(key, val []byte) bool) error
	// Apply applies the batch atomically, durably if sync is set.
	Apply(b *Batch, sync bool) error
}

// OpKind is the kind of one batch operation.
type OpKind uint8

// Batch operation kinds.
const (
	OpSet OpKind = iota + 1
	OpDelete
	OpDeleteRange
)

// Op is one write of a batch: Set Key=Value, Delete Key, or DeleteRange
// [Key, End).
type Op struct {
	Kind  OpKind
	Key   []byte
	Value []byte
	End   []byte
}

// Batch is an ordered list of writes applied atomically.
type Batch struct {
	Ops []Op
}

// Set adds a write of key=val.
func (b *Batch) Set(key, val []byte) {
	b.Ops = append(b.Ops, Op{Kind: OpSet, Key: bytes.Clone(key), Value: bytes.Clone(val)})
}

// Delete adds a deletion of key.
func (b *Batch) Delete(key []byte) {
	b.Ops = append(b.Ops, Op{Kind: OpDelete, Key: bytes.Clone(key)})
}

// DeleteRange adds a deletion of every key in [lo, hi).
func (b *Batch) DeleteRange(lo, hi []byte) {
	b.Ops = append(b.Ops, Op{Kind: OpDeleteRange, Key: bytes.Clone(lo), End: bytes.Clone(hi)})
}

// Empty reports whether the batch has no writes.
func (b *Batch) Empty() bool { return b == nil || len(b.Ops) == 0 }

// Ready is what a broker asks its driver to do. The driver takes a Ready
// whenever it likes (typically once its input queue is drained: every Step
// and Tick since the previous Ready share one batch, which is group commit),
// applies Writes to the broker's store before taking the next Ready, and
// sends Msgs, in order, only once these Writes and every earlier Ready's
// writes are durable (synced when Sync is set). Messages computed from
// state that is not yet durable are never sent early this way.
//
// Early messages are the exception, for a broker whose messages depend on
// nothing its own writes make durable: they may leave as soon as the
// Ready is taken, before any sync. A replica of a replicated pubend sends
// so what its applied entries release: entries committed, so durable on
// a majority of replicas already.
type Ready struct {
	Writes *Batch
	Sync   bool
	Msgs   []Envelope
	Early  []Envelope
}

// pendingWrites is a broker's batch under construction, with a read
// overlay so that the broker sees its own writes before the driver applies
// them. The overlay covers Set and Delete; DeleteRange is not reflected in
// reads (brokers never read what they range-delete).
//
// A key written twice in one batch is written once, with the last value
// (the PFS rewrites lastIndex and lastTimestamp for every record), unless a
// range deletion came in between.
type pendingWrites struct {
	store     Store
	batch     *Batch
	overlay   map[string][]byte // nil value: deleted
	opIndex   map[string]int    // key -> index of its Set or Delete in batch
	lastRange int               // index of the last DeleteRange, or -1
}

func newPendingWrites(s Store) *pendingWrites {
	return &pendingWrites{store: s, batch: &Batch{}, overlay: map[string][]byte{},
		opIndex: map[string]int{}, lastRange: -1}
}

func (p *pendingWrites) set(key, val []byte) {
	v := bytes.Clone(val)
	p.overlay[string(key)] = v
	if i, ok := p.opIndex[string(key)]; ok && i > p.lastRange {
		p.batch.Ops[i] = Op{Kind: OpSet, Key: p.batch.Ops[i].Key, Value: v}
		return
	}
	p.opIndex[string(key)] = len(p.batch.Ops)
	p.batch.Ops = append(p.batch.Ops, Op{Kind: OpSet, Key: bytes.Clone(key), Value: v})
}

func (p *pendingWrites) del(key []byte) {
	p.overlay[string(key)] = nil
	if i, ok := p.opIndex[string(key)]; ok && i > p.lastRange {
		p.batch.Ops[i] = Op{Kind: OpDelete, Key: p.batch.Ops[i].Key}
		return
	}
	p.opIndex[string(key)] = len(p.batch.Ops)
	p.batch.Delete(key)
}

func (p *pendingWrites) deleteRange(lo, hi []byte) {
	p.lastRange = len(p.batch.Ops)
	p.batch.DeleteRange(lo, hi)
}

// get reads key through the overlay.
func (p *pendingWrites) get(key []byte) ([]byte, bool, error) {
	if v, ok := p.overlay[string(key)]; ok {
		return v, v != nil, nil
	}
	return p.store.Get(key)
}

// empty reports whether nothing was written since the last take.
func (p *pendingWrites) empty() bool { return p.batch.Empty() }

// take returns the batch and starts a new one.
func (p *pendingWrites) take() *Batch {
	b := p.batch
	p.batch = &Batch{}
	clear(p.overlay)
	clear(p.opIndex)
	p.lastRange = -1
	return b
}
