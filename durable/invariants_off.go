//go:build !invariants

package durable

// invariants is off: see invariants_on.go.
const invariants = false
