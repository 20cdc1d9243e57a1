package match

import (
	"fmt"
	"slices"
	"strings"
)

// Attr is one attribute of an event: a name and a value.
type Attr struct {
	Name  string
	Value Value
}

// Event is a flat set of attributes with distinct names, kept sorted by name.
// Events are immutable.
type Event struct {
	attrs []Attr
}

// NewEvent validates the attributes (names, valid values, no duplicate
// names) and returns the event.
func NewEvent(attrs ...Attr) (Event, error) {
	as := slices.Clone(attrs)
	slices.SortFunc(as, func(a, b Attr) int { return strings.Compare(a.Name, b.Name) })
	for i, a := range as {
		if err := checkAttrName(a.Name); err != nil {
			return Event{}, err
		}
		if !a.Value.IsValid() {
			return Event{}, fmt.Errorf("attribute %s: missing value", a.Name)
		}
		if i > 0 && as[i-1].Name == a.Name {
			return Event{}, fmt.Errorf("attribute %s: given twice", a.Name)
		}
	}
	return Event{attrs: as}, nil
}

// MustEvent is NewEvent for attributes known to be valid; it panics
// otherwise.
func MustEvent(attrs ...Attr) Event {
	e, err := NewEvent(attrs...)
	if err != nil {
		panic(err)
	}
	return e
}

// Len returns the number of attributes.
func (e Event) Len() int { return len(e.attrs) }

// At returns the i-th attribute in name order.
func (e Event) At(i int) Attr { return e.attrs[i] }

// Get returns the value of the named attribute and whether it is present.
func (e Event) Get(name string) (Value, bool) {
	as := e.attrs
	if len(as) <= 8 {
		for _, a := range as {
			if a.Name == name {
				return a.Value, true
			}
		}
		return Value{}, false
	}
	i, ok := slices.BinarySearchFunc(as, name, func(a Attr, n string) int {
		return strings.Compare(a.Name, n)
	})
	if !ok {
		return Value{}, false
	}
	return as[i].Value, true
}

// Equal reports whether e and f have the same attributes and values.
func (e Event) Equal(f Event) bool { return slices.Equal(e.attrs, f.attrs) }

// String renders the event as a JSON object (attributes in name order).
func (e Event) String() string { return string(e.AppendJSON(nil)) }
