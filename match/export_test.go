package match

// Test hooks for the external test package.

// TestGen is the random filter and event generator of the tests.
type TestGen struct{ g *gen }

// NewTestGen returns a generator for a seed.
func NewTestGen(seed uint64) *TestGen { return &TestGen{newGen(seed)} }

// Filter returns a random filter.
func (t *TestGen) Filter() Filter { return t.g.filter() }

// Event returns a random event.
func (t *TestGen) Event() Event { return t.g.event() }

// ShardIndexes returns a Parallel index's shards, for benchmarks that time
// each shard alone.
func (p *Parallel) ShardIndexes() []*Fast { return p.shards }

// Spread reports whether p's subscriptions are spread over its shards.
func (p *Parallel) Spread() bool { return p.split }
