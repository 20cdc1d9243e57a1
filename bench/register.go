package bench

// The harness runs every structure Sift has, whichever command imports it:
// these packages register their indexes with match in their init
// functions.
import (
	_ "github.com/sift-pubsub/sift/baseline/betree"
	_ "github.com/sift-pubsub/sift/baseline/counting"
	_ "github.com/sift-pubsub/sift/baseline/opindex"
	_ "github.com/sift-pubsub/sift/baseline/rein"
	_ "github.com/sift-pubsub/sift/baseline/tama"
	_ "github.com/sift-pubsub/sift/bftree"
	_ "github.com/sift-pubsub/sift/poset"
	_ "github.com/sift-pubsub/sift/sbstree"
)
