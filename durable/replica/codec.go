package replica

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sift-pubsub/sift/durable"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// codecV1 is the version byte of every record and message of this package.
const codecV1 = 1

var errShort = errors.New("truncated")

type enc struct{ b []byte }

func (e *enc) byte1(v byte)     { e.b = append(e.b, v) }
func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) bytes(v []byte)   { e.uvarint(uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) str(v string)     { e.uvarint(uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) version(v byte)   { e.byte1(v) }
func (e *enc) flag(v bool) {
	if v {
		e.byte1(1)
	} else {
		e.byte1(0)
	}
}
func (e *enc) msg(m proto.Message) error {
	v, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	e.bytes(v)
	return nil
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *dec) byte1() byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail(errShort)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *dec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail(errShort)
		return nil
	}
	v := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string { return string(d.bytes()) }

func (d *dec) flag() bool {
	switch d.byte1() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail(errors.New("bad flag"))
	return false
}

func (d *dec) version() {
	if v := d.byte1(); d.err == nil && v != codecV1 {
		d.fail(fmt.Errorf("unknown version %d", v))
	}
}

func (d *dec) msg(m proto.Message) {
	v := d.bytes()
	if d.err == nil {
		if err := proto.Unmarshal(v, m); err != nil {
			d.fail(err)
		}
	}
}

func (d *dec) done() error {
	if d.err == nil && len(d.b) > 0 {
		d.fail(fmt.Errorf("%d trailing bytes", len(d.b)))
	}
	return d.err
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
	e.uvarint(p.index)
	e.uvarint(p.term)
	conf := p.conf
	if conf == nil {
		conf = &pb.ConfState{}
	}
	if err := e.msg(conf); err != nil {
		panic(fmt.Sprintf("replica: marshal conf state: %v", err)) // a ConfState always marshals
	}
	return e.b
}

func decodePoint(b []byte) (point, error) {
	d := dec{b: b}
	d.version()
	p := point{index: d.uvarint(), term: d.uvarint(), conf: &pb.ConfState{}}
	d.msg(p.conf)
	return p, d.done()
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
	e.version(codecV1)
	e.uvarint(p.Proposer)
	e.uvarint(p.Activation)
	e.uvarint(p.Seq)
	e.flag(p.Fence)
	e.uvarint(uint64(len(p.Ops)))
	for _, op := range p.Ops {
		e.byte1(byte(op.Kind))
		e.bytes(op.Key)
		switch op.Kind {
		case durable.OpSet:
			e.bytes(op.Value)
		case durable.OpDeleteRange:
			e.bytes(op.End)
		}
	}
	return e.b
}

// maxOps bounds the ops a decoded proposal or snapshot may announce, so
// a hostile length cannot make the decoder allocate without bound.
const maxOps = 1 << 24

func decodeProposal(b []byte) (proposal, error) {
	d := dec{b: b}
	d.version()
	p := proposal{Proposer: d.uvarint(), Activation: d.uvarint(), Seq: d.uvarint(), Fence: d.flag()}
	n := d.uvarint()
	if n > maxOps || n > uint64(len(d.b)) {
		d.fail(fmt.Errorf("%d ops in %d bytes", n, len(d.b)))
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		op := durable.Op{Kind: durable.OpKind(d.byte1()), Key: d.bytes()}
		switch op.Kind {
		case durable.OpSet:
			op.Value = d.bytes()
		case durable.OpDelete:
		case durable.OpDeleteRange:
			op.End = d.bytes()
		default:
			d.fail(fmt.Errorf("unknown op kind %d", op.Kind))
		}
		p.Ops = append(p.Ops, op)
	}
	if err := d.done(); err != nil {
		return proposal{}, fmt.Errorf("proposal: %w", err)
	}
	return p, nil
}

// kv is one key of a snapshot.
type kv struct{ k, v []byte }

func encodeSnapshot(kvs []kv) []byte {
	e := enc{}
	e.version(codecV1)
	e.uvarint(uint64(len(kvs)))
	for _, x := range kvs {
		e.bytes(x.k)
		e.bytes(x.v)
	}
	return e.b
}

func decodeSnapshot(b []byte) ([]kv, error) {
	d := dec{b: b}
	d.version()
	n := d.uvarint()
	if n > maxOps || n > uint64(len(d.b)) {
		d.fail(fmt.Errorf("%d keys in %d bytes", n, len(d.b)))
	}
	var kvs []kv
	for i := uint64(0); i < n && d.err == nil; i++ {
		kvs = append(kvs, kv{k: d.bytes(), v: d.bytes()})
	}
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return kvs, nil
}
