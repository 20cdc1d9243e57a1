package poset

import "fmt"

// Policy says how a router uses the answers of assisting clients (RTO and
// FF).
type Policy uint8

const (
	// Trust uses one client's answer as it is. A wrong answer can misplace
	// the filter so that events are missed: use it only with trusted
	// clients.
	Trust Policy = iota
	// Majority asks several clients and keeps, bit by bit, the majority; if
	// the clients disagree at all, the result is verified as under Verify.
	// Events can be missed only if every client asked lies the same way.
	Majority
	// Verify checks the claimed position with covering tests: every claimed
	// predecessor (or parent) covers the filter, a predecessor strictly
	// (not equivalent to it), and the filter covers every claimed successor
	// (or adopted node). On failure the router inserts the filter itself.
	// No answer can make an event be missed.
	Verify
)

var policyNames = [...]string{Trust: "trust", Majority: "majority", Verify: "verify"}

// String returns the policy's name.
func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("policy(%d)", uint8(p))
}

// ParsePolicy returns the policy named s (trust, majority, verify).
func ParsePolicy(s string) (Policy, error) {
	for p, name := range policyNames {
		if name == s {
			return Policy(p), nil
		}
	}
	return 0, fmt.Errorf("unknown policy %q (valid: trust, majority, verify)", s)
}

// combine merges the answers of several clients to one vector of n bits:
// the bitwise majority, and whether they disagreed anywhere.
func combine(answers []Bits, n int) (Bits, bool) {
	if len(answers) == 1 {
		return answers[0], false
	}
	out := NewBits(n)
	disputed := false
	for i := range n {
		votes := 0
		for _, a := range answers {
			if a.Get(i) {
				votes++
			}
		}
		if votes != 0 && votes != len(answers) {
			disputed = true
		}
		if 2*votes > len(answers) {
			out.Set(i)
		}
	}
	return out, disputed
}
