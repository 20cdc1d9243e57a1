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

// Config returns the configuration x builds with now (FastConfig.Resolve
// of its size, or of a sized loader's).
func (x *Fast) Config() FastConfig { return x.cfg }

// SharesIDTable reports whether every shard of p holds its ids in p's one
// table, and that table's dense length.
func (p *Parallel) SharesIDTable() (bool, int) {
	for _, s := range p.shards {
		if s.loc != p.loc {
			return false, 0
		}
	}
	return true, len(p.loc.dense)
}
