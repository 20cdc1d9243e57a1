package scribe

import "crypto/sha1"

// GroupID returns the Scribe group id for a group name and its creator's
// name: SHA-1(name + creator) truncated to the space's width. Any node can
// compute it, so no naming service is needed.
func GroupID(s Space, name, creator string) ID {
	sum := sha1.Sum([]byte(name + creator))
	return s.FromBytes(sum[:])
}
