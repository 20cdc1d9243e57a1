package netbench

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// hangSystem is the in-memory system with one step that never returns on
// its own (it waits for ctx): "start", "subscribe", "flush" or "close".
type hangSystem struct{ hang string }

func (h hangSystem) Name() string { return "hang-" + h.hang }

func (h hangSystem) Start(ctx context.Context, routers int, dir string) (Cluster, error) {
	if h.hang == "start" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	c, err := memSystem{name: "mem"}.Start(ctx, routers, dir)
	return &hangCluster{Cluster: c, hang: h.hang, closed: make(chan struct{})}, err
}

type hangCluster struct {
	Cluster
	hang   string
	closed chan struct{}
}

func (c *hangCluster) Subscribe(ctx context.Context, at int, sub workload.NetSub, deliver func(match.Event)) error {
	if c.hang == "subscribe" {
		<-ctx.Done()
		return ctx.Err()
	}
	return c.Cluster.Subscribe(ctx, at, sub, deliver)
}

func (c *hangCluster) Publisher(ctx context.Context, at int, immediate bool) (Publisher, error) {
	p, err := c.Cluster.Publisher(ctx, at, immediate)
	return hangPublisher{Publisher: p, hang: c.hang == "flush"}, err
}

type hangPublisher struct {
	Publisher
	hang bool
}

func (p hangPublisher) Flush(ctx context.Context) error {
	if p.hang {
		<-ctx.Done()
		return ctx.Err()
	}
	return p.Publisher.Flush(ctx)
}

func (c *hangCluster) Close() error {
	if c.hang == "close" {
		<-c.closed // never closed: a Close that does not return
	}
	return c.Cluster.Close()
}

// TestWatchdogEndsHangs: a run whose cluster hangs in a step fails after
// the stall limit and a quarter with an error naming the step, and leaves
// the goroutines of the process in the run's folder; it does not hang.
func TestWatchdogEndsHangs(t *testing.T) {
	for hang, step := range map[string]string{
		"start":     "while starting the cluster",
		"subscribe": "while subscribing subscriber 0",
		"flush":     "while in the throughput phase",
		"close":     "while closing the cluster",
	} {
		t.Run(hang, func(t *testing.T) {
			cfg := tinyConfig(workload.NetTopic, hangSystem{hang: hang})
			cfg.Runs, cfg.Stall, cfg.Dir = 1, 400*time.Millisecond, t.TempDir()
			start := time.Now()
			_, err := Run(context.Background(), cfg)
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), "no progress for 500ms "+step) {
				t.Fatalf("error %v, want no progress %s", err, step)
			}
			if took > 10*time.Second {
				t.Fatalf("the hang ended after %v", took)
			}
			var dumps []string
			filepath.WalkDir(cfg.Dir, func(path string, d fs.DirEntry, err error) error {
				if err == nil && d.Name() == "goroutines.txt" {
					dumps = append(dumps, path)
				}
				return nil
			})
			if len(dumps) != 1 || !strings.Contains(err.Error(), dumps[0]) {
				t.Fatalf("goroutine dumps %v, error %v", dumps, err)
			}
			b, err := os.ReadFile(dumps[0])
			if err != nil || !strings.Contains(string(b), "goroutine ") {
				t.Fatalf("dump: %v, %.200s", err, b)
			}
		})
	}
}

// TestWatchdogDumpOutlivesWorkDir: without Config.Dir the run's folder is
// removed at the end, so the goroutines go to a file of their own, which
// the error names and which is still there.
func TestWatchdogDumpOutlivesWorkDir(t *testing.T) {
	cfg := tinyConfig(workload.NetTopic, hangSystem{hang: "subscribe"})
	cfg.Runs, cfg.Stall = 1, 200*time.Millisecond
	_, err := Run(context.Background(), cfg)
	if err == nil {
		t.Fatal("no error")
	}
	i := strings.Index(err.Error(), "goroutines: ")
	if i < 0 {
		t.Fatalf("error %v names no dump", err)
	}
	path := strings.TrimSuffix(strings.SplitN(err.Error()[i+len("goroutines: "):], ")", 2)[0], ")")
	t.Cleanup(func() { os.Remove(path) })
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "goroutine ") || !strings.HasPrefix(path, os.TempDir()) {
		t.Fatalf("dump %s: %v", path, err)
	}
}
