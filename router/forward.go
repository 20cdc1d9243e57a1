package router

import (
	"context"
	"github.com/sift-pubsub/sift/router/core"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
)

// publishBloom hands a BloomPublish batch from a link to the core, which
// delivers and forwards it (core/bloom_publish.go) decoding its events
// with the loop's current set of wanted names.
func (l *matchLoop) publishBloom(in core.BloomPublish, at time.Time) {
	in.Wanted, _ = l.want.load()
	l.stepEvents(in, in.Conn, len(in.Pub.Events), at)
}

// readLinkData reads a link's data stream: LinkPublish batches in exact
// mode, BloomPublish batches in Bloom mode (the hellos agreed on the mode).
func (r *Router) readLinkData(ctx context.Context, c *conn, sr *streamReader) error {
	if r.cfg.Forward != ForwardBloom {
		return r.readEvents(ctx, c, sr, eventFrames{t: wire.TypeLinkPublish}, func(dec *wire.EventDecoder, _ wire.Type, body []byte) (core.Publish, error) {
			m, err := dec.DecodeOwnedLinkPublish(body) // body is ours: ReadFrame allocated it
			if err != nil {
				return core.Publish{}, err
			}
			return core.Publish{Pub: &m.Publish, Witness: m.Witness}, nil
		})
	}
	for {
		t, body, err := c.readFrame(sr)
		if err != nil {
			return err
		}
		at := time.Now()
		if t != wire.TypeBloomPublish {
			if !t.Known() {
				return wire.Errorf(wire.CodeUnknownType, "unknown frame type %d", byte(t))
			}
			return wire.Errorf(wire.CodeUnexpected, "%s frame on a bloom link's data stream", t)
		}
		m, err := wire.Decode(t, body)
		if err != nil {
			return err
		}
		bp := m.(*wire.BloomPublish)
		if err := c.checkWitnesses(bp); err != nil {
			return err
		}
		if !r.send(ctx, loopMsg{in: core.BloomPublish{Conn: c.id, Pub: bp}, at: at}) {
			return errStopped
		}
	}
}

// checkWitnesses refuses a batch whose entries carry witnesses on a link
// that did not agree on wire.VersionBloomWitness.
func (c *conn) checkWitnesses(bp *wire.BloomPublish) error {
	if c.witness {
		return nil
	}
	for i, e := range bp.Events {
		if e.Witness != 0 {
			return wire.Errorf(wire.CodeUnexpected, "bloom-publish entry %d carries a witness on a link of protocol version %d (witnesses need version %d)", i, wire.Version, wire.VersionBloomWitness)
		}
	}
	return nil
}
