package core

// keyBuckets answers "may this hash be among the key's values'" without a
// probe of their counts (valueCounts), for most hashes that are not: it
// counts, per bucket of the top bits of a hash (linkCache.valueHash), the
// distinct hashes the key's string equalities name. A bucket at zero holds
// none of them, so a value whose hash falls there is named by no filter;
// any other bucket sends the question on to the counts. The first router
// of topic traffic asks it for every event, and most events' key values
// are not subscribed to. The buckets are kept only for the cache's key
// attribute (linkCache.pick), built from its counts when the key is
// chosen.
type keyBuckets struct {
	n [1 << keyBucketBits]uint32
}

// keyBucketBits is the number of a hash's top bits that choose its
// bucket: 4,096 buckets leave most of them empty for a few hundred
// distinct values, in 16 KB.
const keyBucketBits = 12

// newKeyBuckets counts the hashes of strs (keyedFilters.strs).
func newKeyBuckets(strs *valueCounts) *keyBuckets {
	b := &keyBuckets{}
	strs.each(func(h uint32) { b.n[keyBucket(h)]++ })
	return b
}

// add counts a hash that became one of the key's (delta 1) or stopped
// being one (delta -1).
func (b *keyBuckets) add(h uint32, delta int) {
	i := keyBucket(h)
	b.n[i] = uint32(int(b.n[i]) + delta)
}

// mayHold reports whether h may be one of the counted hashes: false only
// when none of them falls in its bucket.
func (b *keyBuckets) mayHold(h uint32) bool { return b.n[keyBucket(h)] != 0 }

// keyBucket returns the bucket of hash h.
func keyBucket(h uint32) uint { return uint(h >> (32 - keyBucketBits)) }
