package main

import _ "github.com/sift-pubsub/sift/poset"
