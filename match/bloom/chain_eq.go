package bloom

// eqMapMin is the length from which an == or != chain also hashes its
// values: one map lookup then finds the run of entries equal to an event
// value, instead of two binary searches.
const eqMapMin = 8

// span is the run [lo, hi) of a chain's entries with one value.
type span struct{ lo, hi int32 }

// hashValues fills seq or feq (whichever plain keys the chain has) with
// the run of each distinct key.
func (ch *chain) hashValues() {
	switch {
	case ch.skeys != nil:
		ch.seq = runs(ch.skeys)
	case ch.fkeys != nil:
		ch.feq = runs(ch.fkeys)
	}
}

// runs maps each key of ascending keys to the run of its copies.
func runs[K float64 | string](keys []K) map[K]span {
	m := make(map[K]span)
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j] == keys[i] {
			j++
		}
		m[keys[i]] = span{int32(i), int32(j)}
		i = j
	}
	return m
}
