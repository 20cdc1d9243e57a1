package router

import "github.com/sift-pubsub/sift/router/core"

// ifaceID names an interface of the router: a client connection or a
// router link (core.ConnID).
type ifaceID = core.ConnID

// InterfaceSummary is one interface's subscriptions, as Router.Summary
// reports them.
type InterfaceSummary = core.InterfaceSummary
