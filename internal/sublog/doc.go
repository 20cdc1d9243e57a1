// Package sublog is a durable subscriber's transaction log: one JSON line
// per message received from its SHB, appended to a file that is the
// subscriber's only persistent state.
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
//   - Open rebuilds the CT from the file. A last line without its newline
//     was torn by a crash: Open truncates it (and syncs the truncation). A
//     complete line that does not parse, or that goes back in tick order,
//     is corruption: Open refuses the file with an error naming the line,
//     and changes nothing.
//
// # Caveats
//
// Only the unterminated tail counts as torn. A file system that can lose
// a synced prefix or reorder writes within a file is outside the model.
// The package does no locking: two processes appending to one file
// corrupt it.
package sublog
