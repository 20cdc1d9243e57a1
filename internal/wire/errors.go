package wire

import (
	"errors"
	"fmt"
)

// Code is a protocol error code. It travels in Error frames and, for fatal
// errors, as the QUIC application error code when a connection is closed.
type Code uint64

// The protocol error codes. Codes marked fatal close the connection.
const (
	// CodeNone closes a connection normally.
	CodeNone Code = 0
	// CodeMalformed: a frame or message that does not decode (fatal).
	CodeMalformed Code = 1
	// CodeFrameTooLarge: a frame longer than the maximum (fatal).
	CodeFrameTooLarge Code = 2
	// CodeUnknownType: a frame type this version does not know (fatal).
	CodeUnknownType Code = 3
	// CodeVersion: no common protocol version (fatal).
	CodeVersion Code = 4
	// CodeUnexpected: a valid message where it is not allowed (fatal).
	CodeUnexpected Code = 5
	// CodeBadFilter: a subscription's filter does not parse; nothing was
	// installed.
	CodeBadFilter Code = 6
	// CodeTooManySubscriptions: the connection's subscription limit is
	// reached; nothing was installed.
	CodeTooManySubscriptions Code = 7
	// CodeDuplicateSubscription: the subscription id is in use.
	CodeDuplicateSubscription Code = 8
	// CodeUnknownSubscription: unsubscribe of an id not installed.
	CodeUnknownSubscription Code = 9
	// CodeSlowConsumer: the connection fell behind its bounded send queue
	// (fatal).
	CodeSlowConsumer Code = 10
	// CodeShutdown: the router is shutting down (fatal).
	CodeShutdown Code = 11
	// CodeInternal: a bug or resource failure on the sender (fatal).
	CodeInternal Code = 12
	// CodeForbidden: the peer's certificate or permissions do not allow
	// the request. A refused subscription or advertisement leaves the
	// connection up; a connection whose certificate may not do what it
	// asked (link as a router, connect as a client), or that publishes
	// outside its permissions, is closed with it.
	CodeForbidden Code = 13
)

var codeNames = [...]string{
	CodeNone:                  "none",
	CodeMalformed:             "malformed",
	CodeFrameTooLarge:         "frame-too-large",
	CodeUnknownType:           "unknown-type",
	CodeVersion:               "version",
	CodeUnexpected:            "unexpected",
	CodeBadFilter:             "bad-filter",
	CodeTooManySubscriptions:  "too-many-subscriptions",
	CodeDuplicateSubscription: "duplicate-subscription",
	CodeUnknownSubscription:   "unknown-subscription",
	CodeSlowConsumer:          "slow-consumer",
	CodeShutdown:              "shutdown",
	CodeInternal:              "internal",
	CodeForbidden:             "forbidden",
}

// String returns the code's name, e.g. "bad-filter".
func (c Code) String() string {
	if c < Code(len(codeNames)) {
		return codeNames[c]
	}
	return fmt.Sprintf("code-%d", uint64(c))
}

// Fatal reports whether an error with this code closes the connection.
func (c Code) Fatal() bool {
	switch c {
	case CodeBadFilter, CodeTooManySubscriptions, CodeDuplicateSubscription, CodeUnknownSubscription, CodeForbidden:
		return false
	}
	return true
}

// ProtocolError is an error with a protocol code: returned by decoders and
// the frame reader, and built from Error frames received from the peer.
type ProtocolError struct {
	Code Code
	Msg  string
}

// Error returns "CODE: message".
func (e *ProtocolError) Error() string { return e.Code.String() + ": " + e.Msg }

// Errorf returns a *ProtocolError with a formatted message.
func Errorf(code Code, format string, args ...any) *ProtocolError {
	return &ProtocolError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// CodeOf returns the protocol code of err: its *ProtocolError's code, or
// CodeInternal for any other non-nil error, CodeNone for nil.
func CodeOf(err error) Code {
	if err == nil {
		return CodeNone
	}
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return CodeInternal
}

func malformed(format string, args ...any) *ProtocolError {
	return Errorf(CodeMalformed, format, args...)
}
