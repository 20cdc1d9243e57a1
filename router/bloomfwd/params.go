package bloomfwd

import (
	"fmt"

	"github.com/sift-pubsub/sift/bftree"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/sbstree"
)

// Index names, for Config.Index.
const (
	IndexSBSTree = "sbstree"
	IndexBFTree  = "bftree"
)

// Config configures a router's Bloom forwarding.
type Config struct {
	// Params are the Bloom parameters; every linked router must use the
	// same (default bloom.Params{}: m=1024, k=3, qualified terms).
	Params bloom.Params
	// Index is the tree over the filters each link forwarded: "sbstree"
	// (default, the faster in match/bloom's measurements) or "bftree".
	Index string
}

// resolved returns c with defaults filled in, or an error naming the bad
// field.
func (c Config) resolved() (Config, error) {
	c.Params = c.Params.Resolved()
	if err := c.Params.Validate(); err != nil {
		return c, fmt.Errorf("bloom forwarding: %w", err)
	}
	if c.Index == "" {
		c.Index = IndexSBSTree
	}
	if c.Index != IndexSBSTree && c.Index != IndexBFTree {
		return c, fmt.Errorf("bloom forwarding: index %q (want %s or %s)", c.Index, IndexSBSTree, IndexBFTree)
	}
	return c, nil
}

// Validate reports why c is unusable, or nil.
func (c Config) Validate() error {
	_, err := c.resolved()
	return err
}

// newTree returns an empty tree of the configured kind.
func (c Config) newTree() (bloom.Tree, error) {
	m := int(c.Params.M)
	if c.Index == IndexBFTree {
		h := bftree.DefaultH
		if m%h != 0 {
			h = 1
		}
		return bftree.New(m, h)
	}
	return sbstree.New(m)
}

// WireParams returns the parameters as LinkHello carries them.
func WireParams(p bloom.Params) *wire.BloomParams {
	p = p.Resolved()
	return &wire.BloomParams{M: uint64(p.M), K: uint64(p.K), Seed: p.Seed, Flat: p.Flat, Hash: bloom.HashFamily}
}

// CheckHello reports, as an error naming both sides' values, why a router
// whose forwarding parameters are own (nil: exact forwarding) cannot link
// to peer, which announced theirs; nil when they agree.
func CheckHello(own *wire.BloomParams, peer string, theirs *wire.BloomParams) error {
	switch {
	case own == nil && theirs == nil:
		return nil
	case own == nil:
		return fmt.Errorf("forwarding modes differ: this router forwards exact, peer %s forwards bloom (%s)", peer, describe(theirs))
	case theirs == nil:
		return fmt.Errorf("forwarding modes differ: this router forwards bloom (%s), peer %s forwards exact", describe(own), peer)
	case *own != *theirs:
		return fmt.Errorf("bloom parameters differ: this router has %s, peer %s has %s", describe(own), peer, describe(theirs))
	}
	return nil
}

func describe(p *wire.BloomParams) string {
	terms := "qualified"
	if p.Flat {
		terms = "flat"
	}
	return fmt.Sprintf("m=%d k=%d seed=%d terms=%s hash=%s", p.M, p.K, p.Seed, terms, p.Hash)
}
