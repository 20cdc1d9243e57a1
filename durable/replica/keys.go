package replica

import (
	"encoding/binary"
)

// Key layout of one replicated pubend in its store. Every key starts with
// 'R', the pubend name (length-prefixed) and a table byte:
//
//	'R' p 's' key        the pubend's state (its own keys, unchanged)
//	'R' p 'm' id         a member's name, by raft id (replicated, in snapshots)
//	'R' p 'e' index      a raft log entry
//	'R' p 'h'            the raft hard state
//	'R' p 'c'            the compaction point: index, term (entries at or below are gone)
//	'R' p 'a'            applied: index, term, conf state
//	'R' p 'i'            this replica's raft id
const roleReplica = 'R'

const (
	tableState   = 's'
	tableMember  = 'm'
	tableEntry   = 'e'
	tableHard    = 'h'
	tableCompact = 'c'
	tableApplied = 'a'
	tableID      = 'i'
)

func prefix(pubend string, table byte) []byte {
	b := []byte{roleReplica}
	b = binary.AppendUvarint(b, uint64(len(pubend)))
	b = append(b, pubend...)
	return append(b, table)
}

func entryKey(pubend string, index uint64) []byte {
	return binary.BigEndian.AppendUint64(prefix(pubend, tableEntry), index)
}

func memberKey(pubend string, id uint64) []byte {
	return binary.BigEndian.AppendUint64(prefix(pubend, tableMember), id)
}

// prefixEnd returns the smallest key above every key starting with p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// StatePrefix returns the prefix under which a replica's store keeps the
// keys of pubend's state (for tools and the simulator's checks).
func StatePrefix(pubend string) []byte { return prefix(pubend, tableState) }
