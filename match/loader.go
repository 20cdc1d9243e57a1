package match

import "fmt"

// Loader bulk-loads subscriptions handed over one at a time, so that a
// caller streaming them from a file need not hold every filter at once.
// Nothing is visible in the index until Finish; a loader abandoned before
// Finish (say, on a malformed line) leaves the index unchanged. Like the
// index, a loader is not safe for concurrent use, and the index must not
// change between a loader's creation and its Finish.
type Loader interface {
	// Add records one subscription. It fails on an id present in the
	// index already; an id repeated within the load fails at Finish.
	Add(id ID, f Filter) error
	// Finish adds every recorded subscription to the index, or fails
	// without change on a repeated id.
	Finish() error
}

// StreamLoader is implemented by indexes whose loader holds less than the
// filters it is given (Fast keeps only its build's compact lists).
type StreamLoader interface {
	NewLoader() Loader
}

// SizedLoader is implemented by indexes whose loader plans its build
// from the number of subscriptions the load will hand it (Fast takes its
// large-index layout from it; see FastConfig.Resolve).
type SizedLoader interface {
	NewSizedLoader(n int) Loader
}

// NewSizedLoader returns idx's loader for a load of about n subscriptions
// (a hint: more or fewer may be added), as NewLoader otherwise.
func NewSizedLoader(idx Index, n int) Loader {
	if sl, ok := idx.(SizedLoader); ok {
		return sl.NewSizedLoader(n)
	}
	return NewLoader(idx)
}

// NewLoader returns idx's own loader, or one that collects the filters and
// loads them at Finish (in bulk when idx supports it).
func NewLoader(idx Index) Loader {
	if sl, ok := idx.(StreamLoader); ok {
		return sl.NewLoader()
	}
	return &collectLoader{idx: idx}
}

// collectLoader is the loader of an index without its own.
type collectLoader struct {
	idx     Index
	ids     []ID
	filters []Filter
	done    bool
}

func (l *collectLoader) Add(id ID, f Filter) error {
	if l.done {
		return fmt.Errorf("load: subscription %d added after Finish", id)
	}
	l.ids = append(l.ids, id)
	l.filters = append(l.filters, f)
	return nil
}

func (l *collectLoader) Finish() error {
	if l.done {
		return fmt.Errorf("load: Finish called twice")
	}
	l.done = true
	err := Load(l.idx, l.ids, l.filters)
	l.ids, l.filters = nil, nil
	return err
}
