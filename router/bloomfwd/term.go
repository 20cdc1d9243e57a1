package bloomfwd

import (
	"fmt"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
)

// toWire renders a term for BloomTerms.
func toWire(t bloom.Term) wire.BloomTerm {
	w := wire.BloomTerm{C: t.C.String()}
	if t.Qualified() {
		w.Qual = t.Qual.String()
	}
	return w
}

// parseTerm parses a term received in BloomTerms: C must be one
// constraint; Qual, when present, only equalities, qualifying a constraint
// that is not one, and only with qualified (not flat) parameters.
func parseTerm(p bloom.Params, w wire.BloomTerm) (bloom.Term, error) {
	c, err := match.Parse(w.C)
	if err != nil {
		return bloom.Term{}, fmt.Errorf("term constraint %q: %w", w.C, err)
	}
	if c.Len() != 1 {
		return bloom.Term{}, fmt.Errorf("term constraint %q: %d constraints (want 1)", w.C, c.Len())
	}
	t := bloom.Term{C: c.At(0)}
	if w.Qual == "" {
		return t, nil
	}
	if p.Flat {
		return bloom.Term{}, fmt.Errorf("term %q qualified by %q, but terms are flat", w.C, w.Qual)
	}
	if t.C.Op == match.OpEq {
		return bloom.Term{}, fmt.Errorf("term %q: an equality is never qualified (by %q)", w.C, w.Qual)
	}
	if t.Qual, err = match.Parse(w.Qual); err != nil {
		return bloom.Term{}, fmt.Errorf("term qualifier %q: %w", w.Qual, err)
	}
	for i := range t.Qual.Len() {
		if t.Qual.At(i).Op != match.OpEq {
			return bloom.Term{}, fmt.Errorf("term qualifier %q: %s is not an equality", w.Qual, t.Qual.At(i))
		}
	}
	return t, nil
}
