package engine_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/streamsql/streamsql/internal/testserver"
)

// chromium returns the headless browser's path; scripts/test.sh installs
// Debian's chromium when it is missing.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium: scripts/test.sh installs it")
	}
	t.Skip("no chromium (scripts/test.sh installs it)")
	return ""
}

// TestDashboard loads the dashboard in headless Chromium and checks that it
// lists the relations, draws each view's dataflow with its operators, the
// checkpoint chart and the running queries table. With
// STREAMSQL_DASHBOARD_SCREENSHOT=file.png it saves a screenshot there (the
// one in docs/dashboard.png).
func TestDashboard(t *testing.T) {
	browser := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	obsExec(t, ctx, conn,
		"CREATE TABLE bids (id int PRIMARY KEY, auction int, price int)",
		"CREATE TABLE auctions (id int PRIMARY KEY, seller text)",
		"CREATE SOURCE clicks (user_id int) WITH (connector = 'datagen', fields.user_id.kind = 'random', "+
			"fields.user_id.min = '1', fields.user_id.max = '50', datagen.rows.per.second = '500')",
		"CREATE MATERIALIZED VIEW top_prices AS SELECT auction, max(price) AS top, count(*) AS bids FROM bids GROUP BY auction",
		"CREATE MATERIALIZED VIEW seller_bids AS SELECT a.seller, count(*) AS n FROM bids b JOIN auctions a ON b.auction = a.id GROUP BY a.seller",
		"CREATE MATERIALIZED VIEW clicks_per_user AS SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id",
		"INSERT INTO auctions SELECT x, 'seller' || (x % 7) FROM generate_series(1, 40) AS x",
		"INSERT INTO bids SELECT x, x % 40 + 1, x * 3 % 1000 FROM generate_series(1, 5000) AS x",
		"DELETE FROM bids WHERE id % 10 = 0",
		"UPDATE bids SET price = price + 1 WHERE id % 7 = 0")
	// A query running while the page shows, on its own connection; it is
	// canceled at the end.
	qconn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	queryDone := make(chan error, 1)
	go func() {
		_, err := qconn.Exec(ctx, "SELECT count(*) FROM generate_series(1, 2000000000) AS x WHERE x % 7 = 1")
		queryDone <- err
	}()
	defer func() {
		if err := qconn.PgConn().CancelRequest(ctx); err != nil {
			t.Errorf("canceling the query: %v", err)
		}
		if err := <-queryDone; err == nil || !strings.Contains(err.Error(), "57014") {
			t.Errorf("the canceled query: %v, want 57014", err)
		}
	}()

	web := httptest.NewServer(srv.Engine.HTTPHandler())
	defer web.Close()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.WindowSize(1200, 1500))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	if err := chromedp.Do(bctx,
		chromedp.Navigate(web.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-loaded="true"]`)),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Poll[chromedp.Void](
		`document.querySelector("#queries").textContent.includes("generate_series")`,
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the running query never showed: %v", err)
	}
	// Another refresh, so that rates are measured between two readings.
	if err := chromedp.Do(bctx, chromedp.Sleep(1500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	text := func(css string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(css)))
		if err != nil {
			t.Fatalf("%s: %v", css, err)
		}
		return s
	}
	views, tables, sources, graphs, queries := text("#views"), text("#tables"), text("#sources"), text("#dataflows"), text("#queries")
	bars, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("#checkpoints rect").length`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"top_prices", "seller_bids", "clicks_per_user"} {
		if !strings.Contains(views, want) {
			t.Errorf("views list %q lacks %s", views, want)
		}
	}
	if !strings.Contains(tables, "bids") || !strings.Contains(tables, "auctions") || !strings.Contains(sources, "clicks") {
		t.Errorf("tables %q, sources %q", tables, sources)
	}
	for _, want := range []string{"StreamHashJoin", "StreamHashAgg", "StreamMaterialize", "rows/s", "rows out"} {
		if !strings.Contains(graphs, want) {
			t.Errorf("dataflow graphs lack %q:\n%s", want, graphs)
		}
	}
	if !strings.Contains(queries, "generate_series") {
		t.Errorf("running queries %q lack the running SELECT", queries)
	}
	if bars == 0 {
		t.Error("the checkpoint chart has no bars")
	}
	if len(shot) == 0 {
		t.Fatal("no screenshot")
	}
	if p := os.Getenv("STREAMSQL_DASHBOARD_SCREENSHOT"); p != "" {
		if err := os.WriteFile(p, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
