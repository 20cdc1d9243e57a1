package replica

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/pebblestore"
	"github.com/sift-pubsub/sift/match"
)

// The benchmarks below measure acknowledged durable publishes per second
// of one pubend with real fsync before acknowledgement (Pebble in a
// temporary folder): unreplicated (durable.Pubend with durable.Host's
// group commit) and replicated on three replicas (each with its own
// Pebble store and its own goroutine, raft messages over in-process
// queues: the network is free, the disk is shared). 100 publishers each
// keep benchWindow publishes unacknowledged.

const (
	benchPublishers = 100
	benchWindow     = 4
)

// benchPubs are the publishers: each sends its next sequence when one of
// its window is acknowledged, until b.N events in all are acknowledged.
type benchPubs struct {
	total, sent, acked int
	next               []uint64
	ev                 match.Event
}

func newBenchPubs(total int) *benchPubs {
	return &benchPubs{total: total, next: make([]uint64, benchPublishers),
		ev: match.MustEvent(match.Attr{Name: "sym", Value: match.Str("IBM")}, match.Attr{Name: "price", Value: match.Int(120)})}
}

func (p *benchPubs) send(i int, step func(durable.Envelope)) {
	if p.sent >= p.total {
		return
	}
	p.sent++
	p.next[i]++
	id := fmt.Sprintf("pub%03d", i)
	step(durable.Envelope{From: id, To: "phb", Msg: durable.Msg{Kind: durable.MsgPublish, Pubend: "p",
		Publisher: id, Seq: p.next[i], Event: p.ev}})
}

func (p *benchPubs) start(step func(durable.Envelope)) {
	for range benchWindow {
		for i := range benchPublishers {
			p.send(i, step)
		}
	}
}

// acks handles the pubend's messages: each ack lets its publisher send.
func (p *benchPubs) acks(msgs []durable.Envelope, step func(durable.Envelope)) {
	for _, env := range msgs {
		if env.Msg.Kind == durable.MsgPubAck && env.Msg.Tick != 0 {
			p.acked++
			var i int
			fmt.Sscanf(env.Msg.Publisher, "pub%d", &i)
			p.send(i, step)
		}
	}
}

func benchNow() durable.Tick { return durable.Tick(time.Now().UnixMicro()) }

func openBench(b *testing.B) *pebblestore.Store {
	s, err := pebblestore.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkUnreplicatedPublish(b *testing.B) {
	store := openBench(b)
	pe, err := durable.NewPubend(pubendConfig(), store)
	if err != nil {
		b.Fatal(err)
	}
	host := durable.NewHost(pe)
	pubs := newBenchPubs(b.N)
	step := func(env durable.Envelope) {
		if err := pe.Step(benchNow(), env); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	began := time.Now()
	pubs.start(step)
	lastTick := time.Now()
	for pubs.acked < b.N {
		if time.Since(lastTick) > 5*time.Millisecond {
			lastTick = time.Now()
			if err := pe.Tick(benchNow()); err != nil {
				b.Fatal(err)
			}
		}
		batch, msgs := host.Take()
		if batch != nil {
			if err := store.Apply(&batch.Writes, false); err != nil {
				b.Fatal(err)
			}
			if err := store.Flush(); err != nil {
				b.Fatal(err)
			}
			msgs = host.Synced()
		}
		pubs.acks(msgs, step)
	}
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "acked/s")
}

// benchMailbox is an unbounded queue of peer messages for one replica.
type benchMailbox struct {
	mu  sync.Mutex
	q   [][]byte
	sig chan struct{}
}

func (m *benchMailbox) put(data []byte) {
	m.mu.Lock()
	m.q = append(m.q, data)
	m.mu.Unlock()
	select {
	case m.sig <- struct{}{}:
	default:
	}
}

func (m *benchMailbox) take() [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.q
	m.q = nil
	return q
}

func BenchmarkReplicatedPublish(b *testing.B) {
	names := []string{"r1", "r2", "r3"}
	boxes := map[string]*benchMailbox{}
	reps := map[string]*Replica{}
	stores := map[string]*pebblestore.Store{}
	for i, name := range names {
		stores[name] = openBench(b)
		boxes[name] = &benchMailbox{sig: make(chan struct{}, 1)}
		// Long election timeouts (1 to 2 s): a loaded machine must not
		// move the lead in the middle of a measurement.
		r, err := New(Config{Pubend: pubendConfig(), Name: name, Replicas: names, ElectionTicks: 100,
			Rand: rand.New(rand.NewPCG(uint64(i), 1))}, stores[name])
		if err != nil {
			b.Fatal(err)
		}
		reps[name] = r
	}
	pubs := newBenchPubs(b.N)
	stop := make(chan struct{})
	done := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex // the publishers belong to the first leader
	leader := ""
	var began time.Time
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, store, box := reps[name], stores[name], boxes[name]
			step := func(env durable.Envelope) {
				if err := r.Step(benchNow(), env); err != nil {
					panic(err)
				}
			}
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			started := false
			for {
				select {
				case <-stop:
					return
				case <-box.sig:
				case <-tick.C:
					if err := r.Tick(benchNow()); err != nil {
						panic(err)
					}
				}
				for _, data := range box.take() {
					if err := r.StepPeer(benchNow(), data); err != nil {
						panic(err)
					}
				}
				if r.Leading() && !started {
					mu.Lock()
					if leader == "" {
						leader, started, began = name, true, time.Now()
						pubs.start(step)
					} else if leader != name {
						panic(fmt.Sprintf("the lead moved from %s to %s during the measurement", leader, name))
					}
					mu.Unlock()
				}
				for {
					rd := r.Ready()
					if rd.Empty() {
						break
					}
					if err := store.Apply(rd.Writes, false); err != nil {
						panic(err)
					}
					for _, m := range rd.PeerNow {
						boxes[m.To].put(m.Data)
					}
					if started {
						pubs.acks(rd.Msgs, step)
						if pubs.acked >= b.N {
							once.Do(func() { close(done) })
						}
					}
					if rd.Sync {
						if err := store.Flush(); err != nil {
							panic(err)
						}
					}
					for _, m := range rd.Peer {
						boxes[m.To].put(m.Data)
					}
					r.Advance()
				}
			}
		}()
	}
	b.ResetTimer()
	<-done
	mu.Lock()
	elapsed := time.Since(began)
	mu.Unlock()
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "acked/s")
}
