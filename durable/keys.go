package durable

import (
	"encoding/binary"
	"fmt"
)

// Key layout. Every key starts with a role byte and a table byte, then the
// pubend name (length-prefixed), then a big-endian number where the table
// is ordered:
//
//	'P' 'm' p          PHB meta: high-water mark, L prefix
//	'P' 'l' p tick     PHB log: publisher, sequence, event
//	'P' 'd' p pub      PHB dedup: highest sequence and its tick
//	'P' 'r' p shb      PHB release report of one SHB
//	'P' 'x' p shb      PHB: an SHB dropped for its absence (rule PHB 6)
//	'P' 'n' p shb      PHB: an SHB learned as a member (PubendConfig.LearnSHBs)
//	'P' 'b' p shb      PHB: the Born of an SHB's store, from its reports
//	'P' 'g' p shb      PHB: the last report of a wiped SHB's previous store, held
//	'P' 's' p          PHB: LostFrom, the start of the L prefix's silent end
//	'P' 'q' p shb      PHB: the stamp of an SHB's newest release report
//	'S' 'b'            SHB: Born, the time of this store's first report
//	'S' 'e'            SHB epoch and filter-set version
//	'S' 't' node       SHB: a filtering router's stamp
//	'S' 'g' sid        SHB registry: subscriber id, filter, start CT
//	'S' 'm' p          SHB meta: LD, L prefix, PFS lastTimestamp/next index
//	'S' 's' p          SHB: LostFrom of the L prefix heard of (MsgLost.From)
//	'S' 'x' p index    PFS record
//	'S' 'i' p sid      PFS lastIndex(s)
//	'S' 'r' p sid      released(s,p)
//	'S' 'p' "" p       SHB: a pubend added at run time (SHB.AddPubend)
const (
	rolePHB = 'P'
	roleSHB = 'S'
)

func keyPrefix(role, table byte, pubend string) []byte {
	b := []byte{role, table}
	b = binary.AppendUvarint(b, uint64(len(pubend)))
	return append(b, pubend...)
}

func keyNum(role, table byte, pubend string, n uint64) []byte {
	return binary.BigEndian.AppendUint64(keyPrefix(role, table, pubend), n)
}

func keyStr(role, table byte, pubend, s string) []byte {
	return append(keyPrefix(role, table, pubend), s...)
}

// keyNumOf returns the number at the end of a keyNum key.
func keyNumOf(key []byte) (uint64, error) {
	if len(key) < 8 {
		return 0, fmt.Errorf("key %x too short", key)
	}
	return binary.BigEndian.Uint64(key[len(key)-8:]), nil
}

// prefixEnd returns the smallest key above every key with the prefix.
func prefixEnd(p []byte) []byte {
	e := append([]byte(nil), p...)
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] < 0xff {
			e[i]++
			return e[:i+1]
		}
	}
	return nil
}

func phbMetaKey(p string) []byte              { return keyPrefix(rolePHB, 'm', p) }
func phbLogKey(p string, t Tick) []byte       { return keyNum(rolePHB, 'l', p, uint64(t)) }
func phbDedupKey(p, pub string) []byte        { return keyStr(rolePHB, 'd', p, pub) }
func phbReportKey(p, shb string) []byte       { return keyStr(rolePHB, 'r', p, shb) }
func phbDropKey(p, shb string) []byte         { return keyStr(rolePHB, 'x', p, shb) }
func phbMemberKey(p, shb string) []byte       { return keyStr(rolePHB, 'n', p, shb) }
func phbBornKey(p, shb string) []byte         { return keyStr(rolePHB, 'b', p, shb) }
func phbWipedKey(p, shb string) []byte        { return keyStr(rolePHB, 'g', p, shb) }
func phbLostFromKey(p string) []byte          { return keyPrefix(rolePHB, 's', p) }
func phbStampKey(p, shb string) []byte        { return keyStr(rolePHB, 'q', p, shb) }
func shbBornKey() []byte                      { return []byte{roleSHB, 'b'} }
func shbLostFromKey(p string) []byte          { return keyPrefix(roleSHB, 's', p) }
func shbPubendKey(p string) []byte            { return keyStr(roleSHB, 'p', "", p) }
func shbEpochKey() []byte                     { return []byte{roleSHB, 'e'} }
func shbStampPrefix() []byte                  { return []byte{roleSHB, 't'} }
func shbStampKey(node string) []byte          { return append(shbStampPrefix(), node...) }
func shbRegKey(sid uint64) []byte             { return keyNum(roleSHB, 'g', "", sid) }
func shbMetaKey(p string) []byte              { return keyPrefix(roleSHB, 'm', p) }
func pfsRecordKey(p string, i uint64) []byte  { return keyNum(roleSHB, 'x', p, i) }
func pfsLastKey(p string, sid uint64) []byte  { return keyNum(roleSHB, 'i', p, sid) }
func releasedKey(p string, sid uint64) []byte { return keyNum(roleSHB, 'r', p, sid) }

// PHBLogPrefix returns the key prefix of pubend p's event log (for tools
// and the simulator's storage checks).
func PHBLogPrefix(p string) []byte { return keyPrefix(rolePHB, 'l', p) }

// PHBDropPrefix returns the key prefix of pubend p's table of dropped SHBs
// (the key is the prefix followed by the SHB's id; for the simulator's
// oracle).
func PHBDropPrefix(p string) []byte { return keyPrefix(rolePHB, 'x', p) }

// PFSRecordPrefix returns the key prefix of pubend p's PFS records at an
// SHB.
func PFSRecordPrefix(p string) []byte { return keyPrefix(roleSHB, 'x', p) }

// EventKeyRoles lists the first key bytes of tables that hold events: only
// a PHB's log does.
var EventKeyRoles = []byte{rolePHB}

// PHBMemberPrefix is the prefix of pubend p's learned-member keys (the SHB
// id follows), for the simulator's oracle.
func PHBMemberPrefix(p string) []byte { return keyPrefix(rolePHB, 'n', p) }
