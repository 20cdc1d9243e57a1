package core

import (
	"errors"
	"fmt"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/bloomfwd"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Config is what a Core is built from.
type Config struct {
	// Mesh is the mesh routing state machine, shared with the driver's
	// matching loop (which still reads it for its event path and
	// queries); nil: the router takes no links, and assist inputs are
	// ignored.
	Mesh *mesh.Mesh
	// Assist is the checked RTO/FF configuration (zero: off).
	Assist AssistSettings
	// Bloom is the checked Bloom forwarding configuration; nil: exact
	// forwarding.
	Bloom *bloomfwd.Config
	// Engine holds the clients' subscriptions (and the links' interfaces),
	// shared with the driver, whose event path routes on it until publish
	// routing moves into the core; required.
	Engine *Engine
}

// Core is the router's core state machine (see the package doc).
type Core struct {
	eng    *Engine
	mesh   *mesh.Mesh
	assist *assist // nil without a mesh
	links
	bloom *bloomState // nil: exact forwarding
	// lt is the link table: the filters each link forwarded, for exact
	// forwarding (and Bloom mode's exact events); nil until a link sends
	// its first Routes.
	lt    *LinkTable
	named map[string]struct{} // attribute names noted (wanted.go)
	now   time.Time
	rd    Ready // effects not yet handed over
	// taken are the Readys handed over and not yet Advanced, the latest
	// last; spare are Readys Advanced, whose arrays the next Readys reuse
	// (the event path fills one per batch).
	taken, spare []Ready
}

// New returns a core for cfg; an error reports a bad Bloom configuration.
func New(cfg Config) (*Core, error) {
	if cfg.Engine == nil {
		return nil, errors.New("router core: no engine")
	}
	b, err := newBloomState(cfg.Bloom)
	if err != nil {
		return nil, fmt.Errorf("router core: %w", err)
	}
	c := &Core{eng: cfg.Engine, mesh: cfg.Mesh, bloom: b, links: links{byLink: make(map[mesh.Link]ConnID), linkOf: make(map[ConnID]mesh.Link)}}
	if cfg.Mesh != nil {
		c.assist = newAssist(cfg.Assist)
	}
	c.named = make(map[string]struct{})
	c.eng.OnFilter = c.noteFilter
	if b != nil {
		b.dict.OnNewTerm = c.noteTerm
	}
	return c, nil
}

// Step takes one input. An error reports bad input (or a refusal the
// input's doc describes) and changes no protocol state.
func (c *Core) Step(in Input) error {
	switch in := in.(type) {
	case ClientFrame:
		return c.clientFrame(in) // assist.go
	case Attach:
		return c.attach(in) // clients.go
	case Subscribe:
		c.subscribe(in)
	case SubscribeBatch:
		c.subscribeBatch(in) // batch.go
	case Unsubscribe:
		c.unsubscribe(in)
	case Detach:
		c.detach(in)
	case LinkUp:
		return c.linkUp(in) // links.go
	case LinkFrame:
		c.linkFrame(in)
	case Advertise:
		c.advertise(in) // advert.go
	case Unadvertise:
		c.unadvertise(in)
	case Publish:
		return c.publish(in) // publish.go
	case BloomPublish:
		return c.bloomPublish(in) // bloom_publish.go
	default:
		return fmt.Errorf("router core: unknown input %T", in)
	}
	return nil
}

// Tick sets the core's clock to now (unless now is earlier) and fires the
// deadlines due.
func (c *Core) Tick(now time.Time) {
	if now.After(c.now) {
		c.now = now
	}
	c.assistTick()
}

// Now returns the core's clock: the time of the latest Tick.
func (c *Core) Now() time.Time { return c.now }

// Deadline returns the earliest pending deadline, if any: the driver
// ticks the core at or after it.
func (c *Core) Deadline() (time.Time, bool) {
	return c.assistDeadline()
}

// HasReady reports whether effects are waiting to be handed over.
func (c *Core) HasReady() bool { return !c.rd.IsEmpty() }

// Ready hands over the effects produced since the last Ready; the driver
// carries them out in field order, then calls Advance. An input stepped
// while a Ready is being carried out (a send that fails detaches its
// connection) has its effects in a new Ready, which the driver carries
// out (and Advances) at once, before it goes on with the first: that is
// the order the effects would have had inside the first input.
func (c *Core) Ready() Ready {
	rd := c.rd
	c.taken = append(c.taken, rd)
	c.rd = Ready{}
	if n := len(c.spare); n > 0 {
		c.rd, c.spare = c.spare[n-1], c.spare[:n-1]
	}
	return rd
}

// Advance tells the core the driver has carried out the Ready it took
// last; its slices are the core's again. Each Ready is paired with one
// Advance; one more panics.
func (c *Core) Advance() {
	n := len(c.taken)
	if n == 0 {
		panic("router core: Advance without Ready")
	}
	rd := c.taken[n-1]
	c.taken[n-1] = Ready{}
	c.taken = c.taken[:n-1]
	rd.reset()
	c.spare = append(c.spare, rd)
}

func (c *Core) frame(to ConnID, data []byte) {
	c.rd.Frames = append(c.rd.Frames, Frame{Conn: to, Data: data})
}

func (c *Core) closeConn(id ConnID, code wire.Code, reason string) {
	c.rd.Close = append(c.rd.Close, Close{Conn: id, Code: code, Reason: reason})
}

func (c *Core) metric(k MetricKind, n uint64) {
	c.rd.Metrics = append(c.rd.Metrics, Metric{Kind: k, N: n})
}
