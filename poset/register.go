package poset

import "github.com/sift-pubsub/sift/match"

func init() {
	match.RegisterIndex(match.IndexInfo{
		Name:        "poset",
		Description: "SIENA filters poset: covering DAG walked from the roots",
		New:         func() match.Index { return NewPoset(Config{}) },
	})
	match.RegisterIndex(match.IndexInfo{
		Name:        "forest",
		Description: "poset-derived forest: covering tree walked from the roots",
		New:         func() match.Index { return NewForest(Config{}) },
	})
}
