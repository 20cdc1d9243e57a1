package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserPage returns the 20-line page of docs/http.md (between its
// browser-page markers) and checks that README.md shows the same one.
func browserPage(t *testing.T) string {
	doc, err := os.ReadFile("../../docs/http.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- browser-page -->\n```html\n")
	page, _, ok2 := strings.Cut(rest, "```\n<!-- /browser-page -->")
	if !ok || !ok2 {
		t.Fatal("docs/http.md: no browser-page block")
	}
	if n := strings.Count(page, "\n"); n != 20 {
		t.Fatalf("the browser page has %d lines, the docs say twenty", n)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```html\n"+page+"```\n") {
		t.Fatal("README.md does not show the browser page of docs/http.md")
	}
	return page
}

// TestBrowserPage: the documented page, served from another origin that
// the gateway allows (as with siftd --http-origin), shows in Chromium the
// events matching its filter, and only those.
func TestBrowserPage(t *testing.T) {
	bin := chromium(t)
	page := browserPage(t)
	pages := httptest.NewServer(nil) // its URL is the page's origin, set below
	defer pages.Close()
	tg := startGateway(t, nil, func(c *Config) { c.Origins = []string{pages.URL} })
	page = strings.Replace(page, `"http://127.0.0.1:8080"`, `"`+tg.srv.URL+`"`, 1)
	pages.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(page))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bctx, stop := browser(t, ctx, bin)
	defer stop()
	err := chromedp.Do(bctx,
		chromedp.Navigate(pages.URL+"/watch.html"),
		chromedp.Click(chromedp.CSS("#watch")),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Publish until the page's subscription is installed and shows one.
	deadline := time.Now().Add(20 * time.Second)
	for {
		tg.mustPublish("", jsonLines(`{"symbol":"IBM","price":50}`, `{"symbol":"IBM","price":9.5}`), 2)
		n := evaluate[int](t, bctx, `document.querySelectorAll("#events li").length`)
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the page shows no event after 20s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	for _, li := range evaluate[[]string](t, bctx, `[...document.querySelectorAll("#events li")].map(li => li.textContent)`) {
		if li != `{"price":9.5,"symbol":"IBM"}` {
			t.Fatalf("the page shows %s, which does not match its filter", li)
		}
	}
}

// TestDashboardWithToken: with bearer tokens, the dashboard opened as
// /?token=TOKEN reads /v1/status and watches events with the token, and
// without one it says that the status is refused.
func TestDashboardWithToken(t *testing.T) {
	bin := chromium(t)
	tg := startGateway(t, nil, func(c *Config) { c.Tokens = map[string]string{"tok-d": "dash"} })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bctx, stop := browser(t, ctx, bin)
	defer stop()
	err := chromedp.Do(bctx,
		chromedp.Navigate(tg.srv.URL+"/"),
		chromedp.Poll[chromedp.Void](`document.getElementById("statusError").textContent.includes("bearer token")`, chromedp.WithPollingTimeout(20*time.Second)),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The token page opens in a tab of its own: a Poll after a second
	// navigation in one tab may be sent to the first page's execution
	// context, already gone ("Cannot find context with specified id",
	// seen once in CI).
	bctx, closeTab := chromedp.NewContext(bctx)
	defer closeTab()
	err = chromedp.Do(bctx,
		chromedp.Navigate(tg.srv.URL+"/?token=tok-d"),
		chromedp.Poll[chromedp.Void](`document.getElementById("router").textContent === "r1" && document.querySelectorAll("#pubends tbody tr").length === 1 && document.getElementById("statusError").textContent === ""`, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.SendKeys(chromedp.CSS("#filter"), `n >= 2`),
		chromedp.Click(chromedp.CSS("#go")),
		chromedp.Poll[chromedp.Void](`document.getElementById("watchStatus").textContent.startsWith("watching")`, chromedp.WithPollingTimeout(20*time.Second)),
	)
	if err != nil {
		t.Fatal(err)
	}
	code, out := tg.post("", "application/x-ndjson", jsonLines(`{"n":1}`, `{"n":2}`), map[string]string{"Authorization": "Bearer tok-d"})
	if code != 200 {
		t.Fatalf("publish: %d %v", code, out)
	}
	if err := chromedp.Do(bctx, chromedp.Poll[chromedp.Void](`document.querySelectorAll("#events li").length === 1`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatal(err)
	}
	if got := evaluate[string](t, bctx, `document.querySelector("#events li").textContent`); got != `{"n":2}` {
		t.Fatalf("shown %s", got)
	}
}
