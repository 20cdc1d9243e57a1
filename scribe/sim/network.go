package sim

import "github.com/sift-pubsub/sift/scribe"

// Network gives the delay between nodes. It is the proximity Pastry measures.
type Network interface {
	scribe.Proximity
	// Nodes is the number of end nodes the network places.
	Nodes() int
}

// LinkNetwork is a Network made of physical links, for link stress.
type LinkNetwork interface {
	Network
	// NumLinks is the number of physical links, numbered from 0.
	NumLinks() int
	// Links calls fn with every link on the path a message from a to b takes.
	Links(a, b scribe.Addr, fn func(link int32))
	// Router returns the router node a attaches to.
	Router(a scribe.Addr) int32
	// RouterTree calls fn with every link of the shortest-path tree from
	// router src that reaches the routers in dst: the links IP multicast
	// from src would use.
	RouterTree(src int32, dst []int32, fn func(link int32))
	// AccessLink is the link attaching node a to its router.
	AccessLink(a scribe.Addr) int32
}
