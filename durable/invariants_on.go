//go:build invariants

package durable

// invariants turns on the brokers' internal consistency checks after every
// Step and Tick: build with -tags invariants (go test -tags invariants
// ./durable/..., go run -tags invariants ./cmd/sift sim durable). The
// checks cost nothing in other builds.
const invariants = true
