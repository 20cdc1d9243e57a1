package scribe

// Node is one Pastry/Scribe peer as a pure state machine. Create it with
// [NewNode]; feed it messages with [Node.Step] and time with [Node.Tick];
// send what it puts in the [Outbox].
type Node struct {
	cfg   Config
	space Space
	self  Ref
	prox  Proximity

	leaf   leafSet
	table  routingTable
	neigh  neighbourSet
	dead   map[Addr]struct{} // peers found dead; nil until the first failure
	told   map[Addr]struct{} // peers told about this node during its join
	heard  []Ref             // peers heard of during the join, not yet told
	joined bool              // the join's final state has arrived

	groups    []*group // sorted by key
	nchildren int      // children entries over all groups
	replicas  []ID     // groups whose root state this node replicates, sorted
	roots     []cachedRoot
}

type cachedRoot struct {
	key  ID
	root Ref
}

// NewNode returns a node with empty routing state. cfg must have passed
// [Config.Validate] (after [Config.WithDefaults]); prox measures distances
// from this node.
func NewNode(cfg Config, self Ref, prox Proximity) *Node {
	s := cfg.Space()
	return &Node{
		cfg:   cfg,
		space: s,
		self:  self,
		prox:  prox,
		leaf:  newLeafSet(cfg.Leaf),
		table: newRoutingTable(s),
		neigh: newNeighbourSet(cfg.Neighbours),
	}
}

// Self returns the node's own reference.
func (n *Node) Self() Ref { return n.self }

// Step handles one message that arrived at time now and appends the effects
// to out.
func (n *Node) Step(now Time, m *Message, out *Outbox) {
	switch m.Kind {
	case KindPastryJoin:
		n.onPastryJoin(m, out)
	case KindJoinState:
		n.onJoinState(m, out)
	case KindAnnounce:
		n.Learn(m.From)
	case KindLeafRequest, KindRowRequest:
		n.onStateRequest(m, out)
	case KindStateReply:
		n.onStateReply(m, out)
	case KindUndeliverable:
		n.onUndeliverable(now, m, out)
	case KindCreate:
		n.onCreate(now, m, out)
	case KindJoin, KindJoinDirect:
		n.onJoin(now, m, out)
	case KindLeave:
		n.onLeave(m, out)
	case KindPublish:
		n.onPublish(now, m, out)
	case KindRootAddr:
		n.cacheRoot(m.Key, m.From)
	case KindMulticast:
		n.onMulticast(now, m, out)
	case KindHeartbeat:
		n.onHeartbeat(now, m, out)
	case KindReplica:
		n.addReplica(m.Key)
	case KindRedirect:
		n.onRedirect(now, m, out)
	case KindCollapse:
		n.onCollapse(now, m, out)
	case KindNewParent:
		n.onNewParent(now, m)
	}
}

// distTo is the proximity from this node to a.
func (n *Node) distTo(a Addr) int64 { return n.prox.Distance(n.self.Addr, a) }

func (n *Node) isDead(a Addr) bool {
	_, ok := n.dead[a]
	return ok
}

// Learn offers r to the node's leaf set, routing table and neighbourhood set;
// each keeps it if it fits better than what it holds. It reports whether any
// of them kept r. Pastry calls it for every node it hears of; a simulator of
// a static network may call it directly to build tables from global
// knowledge.
func (n *Node) Learn(r Ref) bool {
	if !r.Valid() || r.Addr == n.self.Addr || n.isDead(r.Addr) {
		return false
	}
	a := n.leaf.consider(n.self.ID, r)
	b := n.table.consider(n.self.ID, r, n.distTo)
	c := n.cfg.Neighbours > 0 && n.neigh.consider(r, n.distTo(r.Addr))
	return a || b || c
}
