package httpbench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is one benchmark run. Zero fields take the defaults.
type Config struct {
	// Siftd and Sift are the binaries (required).
	Siftd, Sift string
	// Dir is the work folder (certificates, data); default a temporary one.
	Dir string
	// SiftdFlags are extra siftd flags (e.g. --gc-percent 100).
	SiftdFlags []string
	// PublishEvents is how many events the publish phase posts as JSON
	// Lines, in bodies of Batch events from Posters concurrent
	// publishers; defaults 500,000, 5,000 and 4.
	PublishEvents, Batch, Posters int
	// Subscribers is the number of concurrent SSE streams; default
	// 10,000. Stream i subscribes to g == i % Groups (default 100), so
	// that each event of the delivery phase matches Subscribers/Groups
	// streams.
	Subscribers, Groups int
	// DeliverEvents is how many events the delivery phase publishes;
	// default 20,000.
	DeliverEvents int
	// Seed seeds the events' groups; default 1.
	Seed uint64
}

func (c Config) withDefaults() Config {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&c.PublishEvents, 500000)
	def(&c.Batch, 5000)
	def(&c.Posters, 4)
	def(&c.Subscribers, 10000)
	def(&c.Groups, 100)
	def(&c.DeliverEvents, 20000)
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}

// Result holds the figures of a run.
type Result struct {
	Config Config
	// Publish phase (no subscriber): events per second of wall time, and
	// siftd CPU time per event.
	PublishEventsPerSec float64
	PublishCPUPerEvent  time.Duration
	// Idle subscribers: siftd's resident memory and Go heap plus stacks in
	// use before and after opening Subscribers idle streams, per stream.
	RSSBefore, RSSAfter   int64
	LiveBefore, LiveAfter float64 // go_memstats_heap_inuse_bytes + go_memstats_stack_inuse_bytes
	RSSPerSubscriber      float64
	LivePerSubscriber     float64
	SubscribeSeconds      float64 // opening every stream, each acknowledged
	// Delivery phase: SSE messages delivered in aggregate per second of
	// wall time (from the first publish to the last delivery), and siftd
	// CPU time per delivery.
	Delivered             int64
	DeliveredPerSec       float64
	DeliverCPUPerDelivery time.Duration
	DeliverSeconds        float64
}

// Run runs the three phases against a fresh siftd, writing progress to
// log.
func Run(ctx context.Context, cfg Config, log io.Writer) (Result, error) {
	cfg = cfg.withDefaults()
	res := Result{Config: cfg}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "sift-httpbench")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	s, err := startSiftd(ctx, cfg.Siftd, cfg.Sift, dir, cfg.SiftdFlags)
	if err != nil {
		return res, err
	}
	defer s.stop()
	base := "http://" + s.httpAddr
	fmt.Fprintf(log, "siftd pid %d, http %s\n", s.cmd.Process.Pid, s.httpAddr)

	// Idle memory first, while the heap holds nothing else; publishing
	// last, after the streams closed.
	streams, err := idlePhase(ctx, s, cfg, &res)
	closeAll := func() {
		for _, st := range streams {
			st.conn.Close()
		}
		streams = nil
	}
	defer closeAll()
	if err != nil {
		return res, fmt.Errorf("idle phase: %w", err)
	}
	fmt.Fprintf(log, "idle: %d streams in %.1fs; RSS %+.1f KiB per stream, Go heap+stacks %+.1f KiB per stream\n",
		cfg.Subscribers, res.SubscribeSeconds, res.RSSPerSubscriber/1024, res.LivePerSubscriber/1024)
	if err := deliverPhase(ctx, base, s, cfg, streams, &res); err != nil {
		return res, fmt.Errorf("delivery phase: %w", err)
	}
	fmt.Fprintf(log, "deliver: %d SSE messages in %.2fs = %.0f/s, %v siftd CPU per delivery\n",
		res.Delivered, res.DeliverSeconds, res.DeliveredPerSec, res.DeliverCPUPerDelivery)
	closeAll()
	time.Sleep(time.Second) // the gateway ends the closed streams' subscriptions
	if err := publishPhase(ctx, base, s, cfg, &res); err != nil {
		return res, fmt.Errorf("publish phase: %w", err)
	}
	fmt.Fprintf(log, "publish: %.0f events/s, %v siftd CPU per event\n", res.PublishEventsPerSec, res.PublishCPUPerEvent)
	return res, nil
}

// publishPhase posts PublishEvents events as JSON Lines.
func publishPhase(ctx context.Context, base string, s *siftd, cfg Config, res *Result) error {
	bodies := make([][]byte, 0, cfg.PublishEvents/cfg.Batch+1)
	for i := 0; i < cfg.PublishEvents; i += cfg.Batch {
		var b bytes.Buffer
		for j := i; j < min(i+cfg.Batch, cfg.PublishEvents); j++ {
			fmt.Fprintf(&b, "{\"symbol\":\"S%d\",\"price\":%d.5,\"volume\":%d,\"seq\":%d}\n", j%500, j%1000, j%77, j)
		}
		bodies = append(bodies, b.Bytes())
	}
	if err := post(ctx, base, bodies[0]); err != nil { // warm up: dial the router
		return err
	}
	cpu0, _ := s.cpu()
	start := time.Now()
	var next atomic.Int64
	errc := make(chan error, cfg.Posters)
	for range cfg.Posters {
		go func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(bodies) {
					errc <- nil
					return
				}
				if err := post(ctx, base, bodies[i]); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	for range cfg.Posters {
		if err := <-errc; err != nil {
			return err
		}
	}
	wall := time.Since(start)
	cpu1, _ := s.cpu()
	res.PublishEventsPerSec = float64(cfg.PublishEvents) / wall.Seconds()
	res.PublishCPUPerEvent = (cpu1 - cpu0) / time.Duration(cfg.PublishEvents)
	return nil
}

func post(ctx context.Context, base string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/publish", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer r.Body.Close()
	ans, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 {
		return fmt.Errorf("publish: %d %s", r.StatusCode, ans)
	}
	return nil
}

// stream is one SSE subscriber: a raw HTTP/1.0 connection whose data:
// lines are counted.
type stream struct {
	conn net.Conn
	n    atomic.Int64
}

// openStream subscribes with filter and returns once the gateway
// confirmed the subscription (its ": subscribed" comment).
func openStream(addr, filter string) (*stream, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c, "GET /v1/subscribe?filter=%s HTTP/1.0\r\nHost: %s\r\n\r\n", url.QueryEscape(filter), addr)
	buf := make([]byte, 0, 512)
	tmp := make([]byte, 512)
	for !bytes.Contains(buf, []byte(": subscribed\n\n")) {
		c.SetReadDeadline(time.Now().Add(60 * time.Second))
		n, err := c.Read(tmp)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("subscribe %s: %w (read %q)", filter, err, buf)
		}
		buf = append(buf, tmp[:n]...)
		if bytes.HasPrefix(buf, []byte("HTTP/1.")) && !bytes.HasPrefix(buf[9:], []byte("200")) && bytes.Contains(buf, []byte("\r\n\r\n")) {
			c.Close()
			return nil, fmt.Errorf("subscribe %s: %q", filter, buf)
		}
	}
	c.SetReadDeadline(time.Time{})
	return &stream{conn: c}, nil
}

// count reads the stream until it closes, counting "data: " lines.
func (s *stream) count() {
	buf := make([]byte, 16<<10)
	pat := []byte("\ndata: ")
	carry := []byte("\n") // the stream continues after ": subscribed\n\n"
	copy(buf, carry)
	for {
		n, err := s.conn.Read(buf[len(carry):])
		if n > 0 {
			chunk := buf[:len(carry)+n]
			s.n.Add(int64(bytes.Count(chunk, pat)))
			k := min(len(pat)-1, len(chunk))
			carry = append(carry[:0], chunk[len(chunk)-k:]...)
			copy(buf, carry)
		}
		if err != nil {
			return
		}
	}
}

// idlePhase opens the streams, 64 at a time, and measures what they cost
// siftd once idle.
func idlePhase(ctx context.Context, s *siftd, cfg Config, res *Result) ([]*stream, error) {
	liveNames := []string{"go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes"}
	live := func() (float64, error) {
		m, err := s.metrics(liveNames...)
		return m[liveNames[0]] + m[liveNames[1]], err
	}
	// The gateway dials its publishing and first subscription
	// connections on first use: open one stream and publish once before
	// the baseline, so that only the streams are counted.
	warm, err := openStream(s.httpAddr, "warm exists")
	if err != nil {
		return nil, err
	}
	defer warm.conn.Close()
	if err := post(ctx, "http://"+s.httpAddr, []byte(`{"warm":1}`+"\n")); err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second)
	if res.RSSBefore, err = s.rss(); err != nil {
		return nil, err
	}
	if res.LiveBefore, err = live(); err != nil {
		return nil, err
	}
	streams := make([]*stream, cfg.Subscribers)
	start := time.Now()
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range streams {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			st, err := openStream(s.httpAddr, fmt.Sprintf("g == %d", i%cfg.Groups))
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = err
			}
			streams[i] = st
		}()
		if ctx.Err() != nil {
			break
		}
	}
	wg.Wait()
	out := streams[:0]
	for _, st := range streams {
		if st != nil {
			out = append(out, st)
		}
	}
	if first != nil {
		return out, first
	}
	res.SubscribeSeconds = time.Since(start).Seconds()
	for _, st := range out {
		go st.count()
	}
	time.Sleep(3 * time.Second)
	if res.RSSAfter, err = s.rss(); err != nil {
		return out, err
	}
	if res.LiveAfter, err = live(); err != nil {
		return out, err
	}
	res.RSSPerSubscriber = float64(res.RSSAfter-res.RSSBefore) / float64(cfg.Subscribers)
	res.LivePerSubscriber = (res.LiveAfter - res.LiveBefore) / float64(cfg.Subscribers)
	return out, nil
}

// deliverPhase publishes DeliverEvents events, each in a random group,
// and waits until every stream got every event of its group.
func deliverPhase(ctx context.Context, base string, s *siftd, cfg Config, streams []*stream, res *Result) error {
	rng := rand.New(rand.NewPCG(cfg.Seed, 2))
	perGroup := make([]int64, cfg.Groups)
	var bodies [][]byte
	for i := 0; i < cfg.DeliverEvents; i += 1000 {
		var b strings.Builder
		for j := i; j < min(i+1000, cfg.DeliverEvents); j++ {
			g := rng.IntN(cfg.Groups)
			perGroup[g]++
			fmt.Fprintf(&b, "{\"g\":%d,\"seq\":%d,\"symbol\":\"IBM\",\"price\":9.5}\n", g, j)
		}
		bodies = append(bodies, []byte(b.String()))
	}
	var want int64
	for i := range streams {
		want += perGroup[i%cfg.Groups]
	}
	before := int64(0)
	for _, st := range streams {
		before += st.n.Load()
	}
	cpu0, _ := s.cpu()
	start := time.Now()
	go func() {
		for _, b := range bodies {
			if post(ctx, base, b) != nil {
				return
			}
		}
	}()
	deadline := time.Now().Add(5 * time.Minute)
	var got int64
	for {
		got = -before
		for _, st := range streams {
			got += st.n.Load()
		}
		if got >= want || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	wall := time.Since(start)
	cpu1, _ := s.cpu()
	res.Delivered = got
	res.DeliverSeconds = wall.Seconds()
	res.DeliveredPerSec = float64(got) / wall.Seconds()
	if got > 0 {
		res.DeliverCPUPerDelivery = (cpu1 - cpu0) / time.Duration(got)
	}
	if got < want {
		return fmt.Errorf("delivered %d of %d SSE messages", got, want)
	}
	return nil
}
