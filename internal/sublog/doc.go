// Package sublog is a durable subscriber's transaction log: one JSON line
// per message received from its SHB, appended to a file that is the
// subscriber's only persistent state. Beside it a small mark file (path +
// ".mark", a cache that may be deleted at any time) records the size,
// line count and checkpoint of a synced prefix, so that reopening a long
// log reads only the lines written after it.
//
// # Format
//
// Each line is one of
//
//	{"pubend":P,"tick":T,"event":{...}}   an event of pubend P at tick T
//	{"pubend":P,"gap":[FROM,TO]}          ticks FROM..TO (inclusive) of P were released undelivered
//	{"ct":{"P":T,...}}                    the checkpoint advanced without an event (silence)
//
// The checkpoint token (CT) of a file is, per pubend, the highest tick its
// lines name: an event's tick, a gap's TO, a ct line's value.
//
// # Promises
//
//   - Sync writes every line appended so far and fsyncs the file before it
//     returns the CT they reach; that CT, and only it, may be acknowledged
//     to the router.
//   - Append methods discard messages at or below the CT (a resumed
//     session may repeat them), so a file never holds a tick twice and its
//     ticks strictly increase per pubend.
//   - Open rebuilds the CT from the file: from its mark and the lines after
//     the marked prefix when the mark fits the file (its checksum holds,
//     the file is at least that long and the 4 KiB before the marked size
//     are the bytes marked), from every line otherwise. A last line without its newline
//     was torn by a crash: Open truncates it (and syncs the truncation). A
//     complete line that does not parse, or that goes back in tick order,
//     is corruption: Open refuses the file with an error naming the line,
//     and changes nothing. Open and Close write the mark once the file is
//     synced (atomically: a crash leaves the old mark or the new one), so
//     a mark only vouches for complete, checked, synced lines. A mark
//     Open cannot write (a full disk, say) does not fail Open: it is
//     reported in Recovery.MarkErr.
//
// # Caveats
//
// Only the unterminated tail counts as torn. A file system that can lose
// a synced prefix or reorder writes within a file is outside the model,
// and so is a file changed in place inside its marked prefix: Open does
// not read those lines again (Read still checks every line).
// The package does no locking: two processes appending to one file
// corrupt it.
package sublog
