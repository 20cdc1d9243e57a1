// Package client is the Go client library of Sift routers: Dial a router
// over QUIC (mutual TLS, ALPN sift/1), Publish events in batches and Flush
// until the router has accepted them, Subscribe with a filter and read the
// matching events, Unsubscribe, Close. Every blocking call takes a
// context.Context; a Client is safe for concurrent use.
//
// # Promises
//
// Publish encodes events straight into the current batch and sends it when
// it is full (Options.BatchSize events or Options.BatchBytes bytes); at most
// Options.MaxInFlight batches are unacknowledged, after which Publish waits.
// Flush sends the partial batch and returns once the router has accepted
// every event published before it. Subscribe returns once the router has
// installed the filter (or refused it: a *wire.ProtocolError with
// CodeBadFilter names the column). A subscription's channel receives each
// matching event once, in publish order per publisher, and is closed when
// the subscription ends; Err then says why (Unsubscribe, Close, or the
// router's error, such as a slow-consumer disconnection).
//
// Instead of the channels, every delivery of a connection may go to one
// callback on its reader goroutine, in delivery order: Options.OnEvent
// with events the application owns, or Options.OnBorrowedEvent with
// borrowed events, valid only until the callback returns (KeepEvent
// copies one to keep), so that the client may decode them into reused
// memory. The channels' events, and OnEvent's, are always owned.
//
// # Caveats
//
// Deliveries for all subscriptions share the connection's data stream: a
// subscription whose channel is not read stalls the others once its buffer
// (Options.SubscriptionBuffer) is full, and eventually the router
// disconnects the client as a slow consumer. Read every subscription.
package client
