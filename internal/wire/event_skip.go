package wire

// skipAttr validates attribute i, at offset o of b, without building it,
// returning the offset after it: the fast path for an attribute the
// decoder drops (Wanted), whose name is the one the previous event had at
// the same position and is known not wanted. A router's filters name few
// of an event's attributes (a topic router one of nine), so most
// attributes take this path: no interned-name lookup, no value, no store
// into the attribute list.
//
// It accepts exactly what fastAttr and the reader accept for such an
// attribute and checks the same things (the name's bytes against the
// validated name cached for position i, the tag, the value's length,
// varint, float finiteness, bool byte and UTF-8), or gives up (false) and
// changes nothing: the caller then decodes the attribute the usual way,
// which accepts or refuses it, and words the error.
func (d *EventDecoder) skipAttr(b []byte, o, i int) (int, bool) {
	if i >= len(d.pos) || d.pos[i].want != wantNo {
		return 0, false
	}
	var p []byte
	if n := shortLen(b, o); n >= 0 {
		p, o = b[o+1:o+1+n], o+1+n
	} else if p, o = fastBytes(b, o); o < 0 {
		return 0, false
	}
	if o >= len(b) || d.pos[i].name != string(p) {
		return 0, false
	}
	return skipValue(b, o) // publishdict_decode.go
}
