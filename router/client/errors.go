package client

import (
	"errors"

	"github.com/sift-pubsub/sift/internal/wire"
)

// Errors a Client returns. Besides ErrClosed and the durable errors
// (ErrRefused, ErrUnreachable, RefusedError), every failure the router
// reports is a *ProtocolError (errors.As) whose Code says what happened;
// IsCode tests for one:
//
//	if client.IsCode(err, client.CodeForbidden) { ... } // permissions
//	var pe *client.ProtocolError
//	if errors.As(err, &pe) && pe.Code == client.CodeBadFilter { ... }

// ProtocolError is an error the router (or the client) reports with a
// protocol code and a message.
type ProtocolError = wire.ProtocolError

// Code is a protocol error code.
type Code = wire.Code

// The codes a caller may meet. Refusals of one request (bad filter, too
// many subscriptions, duplicate or unknown subscription, forbidden
// subscription) leave the connection up; the others end it.
const (
	CodeMalformed             = wire.CodeMalformed
	CodeFrameTooLarge         = wire.CodeFrameTooLarge
	CodeVersion               = wire.CodeVersion
	CodeUnexpected            = wire.CodeUnexpected
	CodeBadFilter             = wire.CodeBadFilter
	CodeTooManySubscriptions  = wire.CodeTooManySubscriptions
	CodeDuplicateSubscription = wire.CodeDuplicateSubscription
	CodeUnknownSubscription   = wire.CodeUnknownSubscription
	CodeSlowConsumer          = wire.CodeSlowConsumer
	CodeShutdown              = wire.CodeShutdown
	CodeInternal              = wire.CodeInternal
	CodeForbidden             = wire.CodeForbidden
)

// MaxFilterLen bounds a filter's text, in bytes (64 KiB). Subscribe
// refuses a longer filter with CodeBadFilter without sending it; the
// connection and its other subscriptions stay.
const MaxFilterLen = wire.MaxFilterLen

// IsCode reports whether err is (or wraps) a *ProtocolError with code.
func IsCode(err error, code Code) bool {
	var pe *ProtocolError
	return errors.As(err, &pe) && pe.Code == code
}
