package main

// The Bloom-filter trees register themselves as match indexes.
import (
	_ "github.com/sift-pubsub/sift/bftree"
	_ "github.com/sift-pubsub/sift/sbstree"
)
