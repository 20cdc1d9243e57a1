package match

// NewTrustedEvent returns the event made of attrs, taking the slice as it
// is: no copy, no sort, no check. It is for decoders that have already
// established, as they read, everything NewEvent checks (internal/wire's
// event decoder validates every name, value and the order of names), so
// that building the event costs nothing more. Everything else should call
// NewEvent.
//
// Contract, unchecked (breaking it breaks Get, Equal and matching, which
// rely on sorted, distinct, valid attributes):
//   - every name is a valid attribute name (ValidAttrName);
//   - names are in strictly increasing bytewise order, so distinct;
//   - every value is valid (made by Str, Int, Float or Bool, not the zero
//     Value);
//   - the caller never modifies attrs afterwards: the event keeps the
//     slice, and events are immutable.
//
// Under that contract NewTrustedEvent(attrs) is Equal to the event
// NewEvent(attrs...) returns.
func NewTrustedEvent(attrs []Attr) Event { return Event{attrs: attrs} }
