package httpapi

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// browserEnv names the variable that makes a missing Chromium a failure
// instead of a skip (CI sets it where it installs Chromium).
const browserEnv = "SIFT_REQUIRE_BROWSER"

// chromium finds Debian's chromium (or another Chromium binary).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(browserEnv) != "" {
		t.Fatalf("no chromium binary in PATH and %s is set", browserEnv)
	}
	t.Skipf("no chromium binary in PATH (apt-get install chromium; set %s=1 to fail instead)", browserEnv)
	return ""
}

// artifactDir is where the test keeps its screenshot: $SIFT_ARTIFACTS,
// or a sift-artifacts folder in the temporary directory.
func artifactDir(t *testing.T) string {
	dir := os.Getenv("SIFT_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "sift-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDashboardInChromium: a 3-router chain a - b - c, the dashboard of b
// in headless Chromium: the mesh picture shows every router and both
// links; typing a filter shows the matching events published at a (and
// not the others); a screenshot is kept.
func TestDashboardInChromium(t *testing.T) {
	bin := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	m, err := local.StartMesh(ctx, t.TempDir(), []string{"a", "b", "c"}, []local.Edge{{A: 0, B: 1}, {A: 1, B: 2}}, func(_ int, c *router.Config) {
		c.Durable = &router.DurableConfig{Pubends: map[string]string{"a": "a"}, Members: []string{"a", "b", "c"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	b := m.Routers[1]
	gw, err := New(Config{Router: b.Router, TLS: nodeTLS(t, b.CertsDir)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	defer func() {
		srv.CloseClientConnections()
		srv.Close()
		gw.Close()
	}()
	// A durable SSE subscriber at b, for the durable table.
	tg := &testGateway{t: t, srv: srv, client: srv.Client()}
	tg.mustSubscribe("filter="+url.QueryEscape(`price < 10`)+"&durable=dash", nil)
	// A subscriber at c, so that b's picture has filters on a link.
	cc, err := m.Routers[2].Dial(ctx, "c-sub", client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if _, err := cc.Subscribe(ctx, `symbol exists`); err != nil {
		t.Fatal(err)
	}

	bctx, stop := browser(t, ctx, bin)
	defer stop()

	err = chromedp.Do(bctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#mesh g.router").length === 3 && document.querySelectorAll("#mesh line.link").length === 2`, chromedp.WithPollingTimeout(20*time.Second)),
	)
	if err != nil {
		t.Fatal(err)
	}
	routers := evaluate[[]string](t, bctx, `[...document.querySelectorAll("#mesh g.router")].map(g => g.dataset.router)`)
	links := evaluate[[]string](t, bctx, `[...document.querySelectorAll("#mesh line.link:not(.via)")].map(l => l.dataset.link)`)
	via := evaluate[[]string](t, bctx, `[...document.querySelectorAll("#mesh line.via")].map(l => l.dataset.link)`)
	slices.Sort(routers)
	slices.Sort(links)
	if !slices.Equal(routers, []string{"a", "b", "c"}) || !slices.Equal(links, []string{"b--a", "b--c"}) || len(via) != 0 {
		t.Fatalf("mesh picture: routers %v, links %v, via %v; want a b c, b--a b--c", routers, links, via)
	}

	err = chromedp.Do(bctx,
		chromedp.SendKeys(chromedp.CSS("#filter"), `price < 10 && symbol prefix "I"`),
		chromedp.Click(chromedp.CSS("#go")),
		chromedp.Poll[chromedp.Void](`document.getElementById("watchStatus").textContent.startsWith("watching")`, chromedp.WithPollingTimeout(20*time.Second)),
	)
	if err != nil {
		t.Fatal(err)
	}
	status := evaluate[string](t, bctx, `document.getElementById("watchStatus").textContent`)
	pub, err := m.Routers[0].Dial(ctx, "a-pub", client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	evs := []string{`{"symbol":"IBM","price":5}`, `{"symbol":"HP","price":3}`, `{"symbol":"IBM","price":50}`, `{"symbol":"INTC","price":7.5,"exchange":"NASDAQ"}`}
	for _, e := range evs {
		ev, err := match.ParseEventJSON([]byte(e))
		if err != nil {
			t.Fatal(err)
		}
		if err := pub.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(bctx,
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#events li").length >= 2`, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Sleep(1500*time.Millisecond), // nothing else arrives; the rates refresh
	)
	if err != nil {
		t.Fatal(err)
	}
	if e := evaluate[string](t, bctx, `document.getElementById("statusError").textContent`); e != "" {
		t.Fatalf("the page reports %q", e)
	}
	shown := evaluate[[]string](t, bctx, `[...document.querySelectorAll("#events li")].map(li => li.textContent)`)
	want := []string{`{"exchange":"NASDAQ","price":7.5,"symbol":"INTC"}`, `{"price":5,"symbol":"IBM"}`} // newest first
	if !slices.Equal(shown, want) {
		t.Fatalf("events shown %v, want %v", shown, want)
	}
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(artifactDir(t), "http-dashboard.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("dashboard screenshot (%d bytes, %s): %s", len(png), strings.TrimSpace(status), path)
}

// evaluate runs a JavaScript expression in the page and decodes its value.
func evaluate[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// browser starts headless Chromium with a fresh profile and returns its
// context.
func browser(t *testing.T, ctx context.Context, bin string) (context.Context, func()) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:0:0],
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 960))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	return bctx, func() { bcancel(); acancel() }
}
