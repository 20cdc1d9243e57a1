package bloom

import "github.com/sift-pubsub/sift/match"

// setKeys fills fkeys or skeys from vals (sorted), when they can stand for
// every value exactly.
func (ch *chain) setKeys() {
	if len(ch.vals) == 0 {
		return
	}
	switch classOf(ch.vals[0].Kind()) {
	case 0:
		ch.skeys = make([]string, len(ch.vals))
		for i, v := range ch.vals {
			ch.skeys[i] = v.AsString()
		}
	case 1:
		keys := make([]float64, len(ch.vals))
		for i, v := range ch.vals {
			f, ok := match.ExactFloat(v)
			if !ok {
				return
			}
			keys[i] = f
		}
		ch.fkeys = keys
	}
}

// search returns the first index whose value is >= v (> v when strict),
// comparing plain keys, and false when the chain or v has none.
func (ch *chain) search(v match.Value, strict bool) (int, bool) {
	switch {
	case ch.skeys != nil && v.Kind() == match.KindString:
		return searchKeys(ch.skeys, v.AsString(), strict), true
	case ch.fkeys != nil && v.Kind() != match.KindString:
		if f, ok := match.ExactFloat(v); ok {
			return searchKeys(ch.fkeys, f, strict), true
		}
	}
	return 0, false
}

// searchKeys returns the first index whose key is >= k (> k when strict)
// in ascending keys.
func searchKeys[K float64 | string](keys []K, k K, strict bool) int {
	lo, hi := 0, len(keys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if keys[m] < k || strict && keys[m] == k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
