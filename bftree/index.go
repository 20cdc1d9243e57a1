package bftree

import (
	"fmt"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
)

// DefaultH is the default number of parts, chosen by the sweep in
// notes/issue-4.md.
const DefaultH = 8

// Config configures a bftree index. A zero field takes the default
// written beside it.
type Config struct {
	// Bloom are the Bloom parameters (default bloom.Params{}).
	Bloom bloom.Params
	// H is the number of parts; Bloom.M must be a multiple of it
	// (default DefaultH).
	H int
}

// NewIndex returns an empty exact match.Index whose candidates come from
// a bftree.
func NewIndex(cfg Config) (*bloom.Index, error) {
	if cfg.H == 0 {
		cfg.H = DefaultH
	}
	p := cfg.Bloom.Resolved()
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("bftree: %w", err)
	}
	t, err := New(int(p.M), cfg.H)
	if err != nil {
		return nil, err
	}
	return bloom.NewIndex(fmt.Sprintf("bftree h=%d", cfg.H), p, t)
}

func init() {
	match.RegisterIndex(match.IndexInfo{
		Name:        "bftree",
		Description: "Bloom-filter tree (h parts per filter) with exact re-check; --raw prints the Bloom candidates",
		New: func() match.Index {
			idx, err := NewIndex(Config{})
			if err != nil {
				panic(err) // the defaults are valid
			}
			return idx
		},
	})
}
