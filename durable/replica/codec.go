package replica

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/recbuf"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// codecV1 is the version byte of every record and message of this package.
const codecV1 = 1

// enc appends the fields of this package's records and messages.
type enc struct{ recbuf.Encoder }

func (e *enc) version(v byte) { e.Byte(v) }
func (e *enc) flag(v bool) {
	if v {
		e.Byte(1)
	} else {
		e.Byte(0)
	}
}

// msg appends a protobuf message with its length as a prefix, marshalled
// straight into the buffer (a raft append carries every entry's data:
// marshalling it apart and copying it in allocated it twice).
func (e *enc) msg(m proto.Message) error {
	n := proto.Size(m)
	e.Uvarint(uint64(n))
	e.B = slices.Grow(e.B, n)
	start := len(e.B)
	var err error
	if e.B, err = (proto.MarshalOptions{UseCachedSize: true}).MarshalAppend(e.B, m); err != nil {
		return err
	}
	if len(e.B)-start != n {
		return fmt.Errorf("marshalled %d bytes of a message sized %d", len(e.B)-start, n)
	}
	return nil
}

// dec reads what enc wrote; the first error sticks.
type dec struct{ recbuf.Decoder }

func newDec(b []byte) dec { return dec{recbuf.Decoder{B: b}} }

func (d *dec) flag() bool {
	switch d.Byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.Fail(errors.New("bad flag"))
	return false
}

func (d *dec) version() {
	if v := d.Byte(); d.Err == nil && v != codecV1 {
		d.Fail(fmt.Errorf("unknown version %d", v))
	}
}

// msg unmarshals a length-prefixed protobuf message, reading it in place
// (Unmarshal copies what it keeps).
func (d *dec) msg(m proto.Message) {
	v := d.View()
	if d.Err == nil {
		if err := proto.Unmarshal(v, m); err != nil {
			d.Fail(err)
		}
	}
}

// point is a log position with the configuration as of it: the
// compaction point, or the applied index.
type point struct {
	index, term uint64
	conf        *pb.ConfState
}

func (p point) encode() []byte {
	e := enc{}
	e.version(codecV1)
	e.Uvarint(p.index)
	e.Uvarint(p.term)
	conf := p.conf
	if conf == nil {
		conf = &pb.ConfState{}
	}
	if err := e.msg(conf); err != nil {
		panic(fmt.Sprintf("replica: marshal conf state: %v", err)) // a ConfState always marshals
	}
	return e.B
}

func decodePoint(b []byte) (point, error) {
	d := newDec(b)
	d.version()
	p := point{index: d.Uvarint(), term: d.Uvarint(), conf: &pb.ConfState{}}
	d.msg(p.conf)
	return p, d.Done()
}

// proposal is the data of one raft entry: a batch of the pubend's writes
// from one leader activation (Proposer, Activation) with its sequence
// number, or an empty fence that activation waits for.
type proposal struct {
	Proposer   uint64
	Activation uint64
	Seq        uint64
	Fence      bool
	Ops        []durable.Op
}

func (p proposal) encode() []byte {
	e := enc{}
	e.B = make([]byte, 0, p.sizeBound())
	e.version(codecV1)
	e.Uvarint(p.Proposer)
	e.Uvarint(p.Activation)
	e.Uvarint(p.Seq)
	e.flag(p.Fence)
	e.Uvarint(uint64(len(p.Ops)))
	for _, op := range p.Ops {
		e.Byte(byte(op.Kind))
		e.Bytes(op.Key)
		switch op.Kind {
		case durable.OpSet:
			e.Bytes(op.Value)
		case durable.OpDeleteRange:
			e.Bytes(op.End)
		}
	}
	return e.B
}

// sizeBound is an upper bound of the encoded proposal's length, so encode
// allocates its buffer once instead of growing it op by op.
func (p proposal) sizeBound() int {
	n := 1 + 3*binary.MaxVarintLen64 + 1 + binary.MaxVarintLen64
	for _, op := range p.Ops {
		n += 1 + 2*binary.MaxVarintLen64 + len(op.Key) + len(op.Value) + len(op.End)
	}
	return n
}

// maxOps bounds the ops a decoded proposal or snapshot may announce, so
// a hostile length cannot make the decoder allocate without bound.
const maxOps = 1 << 24

// decodeProposal decodes an entry's data; the ops it returns share b.
func decodeProposal(b []byte) (proposal, error) {
	d := newDec(b)
	d.version()
	p := proposal{Proposer: d.Uvarint(), Activation: d.Uvarint(), Seq: d.Uvarint(), Fence: d.flag()}
	n := d.Uvarint()
	if n > maxOps || n > uint64(len(d.B)) {
		d.Fail(fmt.Errorf("%d ops in %d bytes", n, len(d.B)))
	}
	if d.Err == nil && n > 0 {
		// Every op takes two bytes at least (its kind, its key's length):
		// the slice is allocated once, within what the input can hold.
		p.Ops = make([]durable.Op, 0, min(n, uint64(len(d.B)/2)))
	}
	// The ops' keys and values are read in place, sharing b: a raft
	// entry's data is never written again.
	for i := uint64(0); i < n && d.Err == nil; i++ {
		op := durable.Op{Kind: durable.OpKind(d.Byte()), Key: d.View()}
		switch op.Kind {
		case durable.OpSet:
			op.Value = d.View()
		case durable.OpDelete:
		case durable.OpDeleteRange:
			op.End = d.View()
		default:
			d.Fail(fmt.Errorf("unknown op kind %d", op.Kind))
		}
		p.Ops = append(p.Ops, op)
	}
	if err := d.Done(); err != nil {
		return proposal{}, fmt.Errorf("proposal: %w", err)
	}
	return p, nil
}

// kv is one key of a snapshot.
type kv struct{ k, v []byte }

func encodeSnapshot(kvs []kv) []byte {
	e := enc{}
	e.version(codecV1)
	e.Uvarint(uint64(len(kvs)))
	for _, x := range kvs {
		e.Bytes(x.k)
		e.Bytes(x.v)
	}
	return e.B
}

func decodeSnapshot(b []byte) ([]kv, error) {
	d := newDec(b)
	d.version()
	n := d.Uvarint()
	if n > maxOps || n > uint64(len(d.B)) {
		d.Fail(fmt.Errorf("%d keys in %d bytes", n, len(d.B)))
	}
	var kvs []kv
	for i := uint64(0); i < n && d.Err == nil; i++ {
		kvs = append(kvs, kv{k: d.Bytes(), v: d.Bytes()})
	}
	if err := d.Done(); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return kvs, nil
}
