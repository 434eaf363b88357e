//go:build e2e

package tests

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromiumPath is Debian's Chromium (apt install chromium; .ci/run
// installs it), or BATON_TEST_CHROMIUM.
func chromiumPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("BATON_TEST_CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the console's browser tests need Chromium at %s (apt-get install chromium, or set BATON_TEST_CHROMIUM): %v", p, err)
	}
	return p
}

// consoleNode returns Node 22 with playwright-core installed in
// tests/console (npm ci when missing).
func consoleNode(t *testing.T) string {
	t.Helper()
	node := aguiNode(t)
	if _, err := os.Stat("console/node_modules/playwright-core"); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = "console"
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+":"+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in tests/console: %v\n%s", err, out)
		}
	}
	return node
}

// TestConsoleServing: the console's page and assets come from the API's
// origin with a Content Security Policy that allows no inline script, no
// framing and no other origin, and it adds no route but its assets.
func TestConsoleServing(t *testing.T) {
	d := startDev(t, devArgs(t))
	get := func(method, path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, d.base+path, nil)
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	page := get("GET", "/console/")
	if page.StatusCode != 200 || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /console/: %d %s", page.StatusCode, page.Header.Get("Content-Type"))
	}
	csp := page.Header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'none'", "connect-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %s", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP %q allows inline or eval", csp)
	}
	if page.Header.Get("X-Content-Type-Options") != "nosniff" || page.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("headers %v", page.Header)
	}
	if res := get("GET", "/console"); res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "console/" {
		t.Errorf("GET /console: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	for _, path := range []string{"/console/nothing.js", "/console/../v1/runs", "/console/.env"} {
		if res := get("GET", path); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d", path, res.StatusCode)
		}
	}
	if res := get("POST", "/console/"); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /console/: %d", res.StatusCode)
	}
	if res := get("HEAD", "/console/"); res.StatusCode != http.StatusOK {
		t.Errorf("HEAD /console/: %d", res.StatusCode)
	}
}

// TestConsoleInBrowser drives the console in headless Chromium
// (tests/console/console.mjs) at 1,280 × 800: sign-in, a tool call with
// its result, streamed text before the turn completes, Approve from a
// card, a client tool's form, markup shown as text, the runs list (its
// columns, children nested under their parent and collapsed, filters,
// conditional reads answered 304), a run with parallel children (each
// call's own duration), each run's agent version and the versions page
// (aliases, weights, runs per version), the contrast of every button's label (≥ 4.5:1),
// no sideways scroll on either page, no CSP violation; the screenshots
// go to tests/console/artifacts.
func TestConsoleInBrowser(t *testing.T) {
	browser := chromiumPath(t)
	node := consoleNode(t)
	// Scripted models get prices, so runs (and the runs list) show a cost.
	prices := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(prices, []byte(`{"models":{"scripted/":{"input":3,"output":15},"scripted/demo":{"input":3,"output":15}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BATON_PRICES", prices)
	args := devArgs(t)
	d := startDev(t, args)
	artifacts, _ := filepath.Abs("console/artifacts")
	in := map[string]any{"base": d.base, "token": tokAcme, "adminToken": tokAdmin, "chromium": browser, "artifacts": artifacts}
	want := 14
	if os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT") != "" && os.Getenv("BATON_E2E_BASE_URL") == "" {
		// On the emulators the run outlives its process: kill baton dev
		// in the middle of a turn, start it again, and the page shows the
		// turn delivered again.
		in["redelivered"], d = redeliveredRun(t, d, args)
		in["base"] = d.base
		want++
	}
	var out struct{ Passed []string }
	runNodeWith(t, node, "console/console.mjs", in, &out)
	if len(out.Passed) != want {
		t.Fatalf("passed %v", out.Passed)
	}
	t.Logf("console in Chromium: %s; screenshots in %s", strings.Join(out.Passed, ", "), artifacts)
}

// TestConsoleTimeline runs the unit tests of the console's step timeline
// (tests/console/timeline.test.mjs) with Node's test runner: a remote
// agent's failed deliveries (tool_retry) show on its call as they come.
func TestConsoleTimeline(t *testing.T) {
	node := aguiNode(t)
	cmd := exec.Command(node, "--test", "console/timeline.test.mjs")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
}

// redeliveredRun starts a slowly streamed turn, kills baton dev (SIGKILL)
// while it streams, starts it again on the same stores and waits until
// the queue's redelivery completes the run; the run view lists the turn's
// step as delivered again. It returns the run and the new baton dev.
func redeliveredRun(t *testing.T, d *dev, args []string) (string, *dev) {
	t.Helper()
	id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"slow"}],"model":{"provider":"scripted","options":{"chunk_chars":2,"chunk_delay":"100ms"},"turns":[{"content":"A turn long enough to be killed in the middle of."}]}}`)
	// Kill it once the turn's first tokens are on the stream.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", d.base+"/v1/runs/"+id+"/stream", nil)
	req.Header.Set("Authorization", "Bearer "+tokAcme)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() && sc.Text() != "event: token" {
	}
	res.Body.Close()
	if sc.Err() != nil || ctx.Err() != nil {
		t.Fatalf("no token on the stream: %v %v", sc.Err(), ctx.Err())
	}
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()
	d2 := startDev(t, args)
	v := d2.waitStatus(t, id)
	if v["status"] != "completed" {
		t.Fatalf("after the restart: %v", v)
	}
	ds, _ := v["deliveries"].([]any)
	if len(ds) != 1 {
		t.Fatalf("deliveries %v, want the turn's step", v["deliveries"])
	}
	if dl := ds[0].(map[string]any); dl["kind"] != "model_turn" || dl["turn"] != 1.0 || dl["redeliveries"].(float64) < 1 {
		t.Fatalf("deliveries %v, want model turn 1 delivered again", dl)
	}
	return id, d2
}
