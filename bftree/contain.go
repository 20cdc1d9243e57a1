package bftree

import "github.com/sift-pubsub/sift/match/bloom"

// next returns the first child slot j >= from whose part (pw words at
// parts[j*pw:]) the event part ep contains, or -1. Parts of one or two
// words (h >= m/128, the defaults among them) get loops of their own.
func next(ep, parts []uint64, pw, from int) int {
	switch pw {
	case 1:
		e0 := ep[0]
		for j := from; j < len(parts); j++ {
			if parts[j]&^e0 == 0 {
				return j
			}
		}
	case 2:
		e0, e1 := ep[0], ep[1]
		for j := 2 * from; j+1 < len(parts); j += 2 {
			if parts[j]&^e0|parts[j+1]&^e1 == 0 {
				return j / 2
			}
		}
	default:
		for j := from; (j+1)*pw <= len(parts); j++ {
			if bloom.ContainsWords(ep, parts[j*pw:(j+1)*pw]) {
				return j
			}
		}
	}
	return -1
}
