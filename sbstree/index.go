package sbstree

import (
	"fmt"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
)

// NewIndex returns an empty exact match.Index whose candidates come from
// an sbstree over Bloom filters with parameters p (zero fields default).
func NewIndex(p bloom.Params) (*bloom.Index, error) {
	p = p.Resolved()
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("sbstree: %w", err)
	}
	t, err := New(int(p.M))
	if err != nil {
		return nil, err
	}
	return bloom.NewIndex("sbstree", p, t)
}

func init() {
	match.RegisterIndex(match.IndexInfo{
		Name:        "sbstree",
		Description: "sparse-bitset Bloom tree (one node per set bit) with exact re-check; --raw prints the Bloom candidates",
		New: func() match.Index {
			idx, err := NewIndex(bloom.Params{})
			if err != nil {
				panic(err) // the defaults are valid
			}
			return idx
		},
	})
}
