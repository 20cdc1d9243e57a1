package durable

import (
	"fmt"
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// registryRecord is a durable subscription as the registry stores it.
func encodeRegistry(d *durableSub) []byte {
	e := encoder{}
	e.Byte(recordV1)
	e.Str(d.id)
	e.Str(d.filter.String())
	ps := d.start.Pubends()
	e.Uvarint(uint64(len(ps)))
	for _, p := range ps {
		e.Str(p)
		e.tick(d.start[p])
	}
	var flags uint64
	if d.roamed {
		flags |= regRoamed
	}
	e.Uvarint(flags)
	return e.B
}

// Registry record flags.
const regRoamed = 1

func decodeRegistry(sid uint64, b []byte) (*durableSub, error) {
	d := newDecoder(b)
	if v := d.Byte(); d.Err == nil && v != recordV1 {
		return nil, fmt.Errorf("registry record: unknown version %d", v)
	}
	sub := &durableSub{sid: sid, id: d.Str(), start: CT{}, released: CT{}, written: CT{}}
	text := d.Str()
	for range d.Count(2) {
		p := d.Str()
		sub.start[p] = d.tick()
	}
	sub.roamed = d.Uvarint()&regRoamed != 0
	if err := d.Done(); err != nil {
		return nil, fmt.Errorf("registry record %d: %w", sid, err)
	}
	f, err := match.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("registry record %d: filter: %w", sid, err)
	}
	sub.filter = f
	return sub, nil
}

// recover loads the registry, per-pubend metadata, PFS lastIndex and
// released values, and starts a new epoch.
func (s *SHB) recover() error {
	st := s.w.store
	ev, err := getTicks(st.Get, shbEpochKey(), 3)
	if err != nil {
		// The record of earlier versions carried one router stamp too,
		// now kept per router in the stamp table.
		if ev, err = getTicks(st.Get, shbEpochKey(), 5); err != nil {
			return err
		}
	}
	s.epoch, s.version, s.nextSID = uint64(ev[0])+1, uint64(ev[1]), max(uint64(ev[2]), 1)
	s.epochDirty = true
	born, err := getTicks(st.Get, shbBornKey(), 1)
	if err != nil {
		return err
	}
	s.born = born[0]
	if err := s.recoverStamps(); err != nil {
		return err
	}
	bySID := map[uint64]*durableSub{}
	pre := keyPrefix(roleSHB, 'g', "")
	if err := scanNum(st, pre, func(sid uint64, v []byte) error {
		d, err := decodeRegistry(sid, v)
		if err == nil {
			s.setSub(d)
			bySID[sid] = d
		}
		return err
	}); err != nil {
		return err
	}
	pre = shbPubendKey("")
	if err := st.Scan(pre, prefixEnd(pre), func(k, _ []byte) bool {
		if p := string(k[len(pre):]); !contains(s.cfg.Pubends, p) {
			s.cfg.Pubends = append(s.cfg.Pubends, p)
		}
		return true
	}); err != nil {
		return err
	}
	slices.Sort(s.cfg.Pubends)
	for _, p := range s.cfg.Pubends {
		if err := s.recoverPubend(p, bySID); err != nil {
			return fmt.Errorf("pubend %s: %w", p, err)
		}
	}
	return nil
}

func (s *SHB) recoverPubend(id string, bySID map[uint64]*durableSub) error {
	st := s.w.store
	pb := newSHBPubend(id, s.w, s.cfg.TailSize)
	s.pubs[id] = pb
	m, err := getTicks(st.Get, shbMetaKey(id), 5)
	if err != nil {
		return err
	}
	pb.ld, pb.lost, pb.pfs.lastTS = m[0], m[1], m[2]
	pb.pfs.next, pb.pfs.first = max(uint64(m[3]), 1), max(uint64(m[4]), 1)
	lf, err := getTicks(st.Get, shbLostFromKey(id), 1)
	if err != nil {
		return err
	}
	pb.lostFrom = lf[0] // 0 (not known) in a store written before it existed
	pb.written = pb.meta()
	pb.in = NewStream(pb.ld)
	pb.in.AddLost(pb.lost)
	if err := scanNum(st, keyPrefix(roleSHB, 'i', id), func(sid uint64, v []byte) error {
		t, err := decodeTicks(v, 1)
		pb.pfs.lastIndex[sid] = uint64(t[0])
		return err
	}); err != nil {
		return err
	}
	return scanNum(st, keyPrefix(roleSHB, 'r', id), func(sid uint64, v []byte) error {
		t, err := decodeTicks(v, 1)
		if d, ok := bySID[sid]; ok && err == nil {
			d.released[id], d.written[id] = t[0], t[0]
		}
		return err
	})
}

// recoverStamps loads the filtering routers' stamps.
func (s *SHB) recoverStamps() error {
	pre := shbStampPrefix()
	var derr error
	err := s.w.store.Scan(pre, prefixEnd(pre), func(k, v []byte) bool {
		ts, err := decodeTicks(v, 2)
		if err != nil {
			derr = fmt.Errorf("stamp key %x: %w", k, err)
			return false
		}
		node := string(k[len(pre):])
		s.stamps[node] = Stamp{Node: node, Epoch: uint64(ts[0]), Version: uint64(ts[1])}
		return true
	})
	if err == nil {
		err = derr
	}
	return err
}

// scanNum scans a table keyed by a trailing big-endian number.
func scanNum(st Store, pre []byte, fn func(uint64, []byte) error) error {
	var ferr error
	err := st.Scan(pre, prefixEnd(pre), func(k, v []byte) bool {
		n, err := keyNumOf(k)
		if err == nil {
			err = fn(n, v)
		}
		if err != nil {
			ferr = fmt.Errorf("key %x: %w", k, err)
			return false
		}
		return true
	})
	if err == nil {
		err = ferr
	}
	return err
}

// SHBMetaKey returns the key of an SHB's metadata record for pubend p (for
// tools and the simulator's oracle).
func SHBMetaKey(p string) []byte { return shbMetaKey(p) }

// DecodeSHBMeta returns latestDelivered from an SHB metadata record.
func DecodeSHBMeta(v []byte) (ld Tick, err error) {
	ts, err := decodeTicks(v, 5)
	if err != nil {
		return 0, fmt.Errorf("shb meta: %w", err)
	}
	return ts[0], nil
}
