//go:build e2e

package tests

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCORSEndToEnd: baton dev with --cors-origins answers a browser's
// preflight of every route family for an allowed origin only, and its
// answers (streamed, buffered, errors) carry Access-Control-Allow-Origin
// for that origin only.
func TestCORSEndToEnd(t *testing.T) {
	if os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("starts baton dev itself, with flags of its own")
	}
	const allowed, other = "http://app.example.test", "http://evil.example.test"
	d := startDev(t, append(storeModes(t)["embedded"], "--cors-origins", allowed))
	do := func(method, path, origin string, hdr map[string]string, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, d.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	preflight := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"}
	if r := do("OPTIONS", "/v1/agents/e2e/agui", allowed, preflight, ""); r.StatusCode != 204 || r.Header.Get("Access-Control-Allow-Origin") != allowed ||
		!strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "POST") || !strings.Contains(strings.ToLower(r.Header.Get("Access-Control-Allow-Headers")), "authorization") {
		t.Fatalf("preflight from the allowed origin: %d %v", r.StatusCode, r.Header)
	}
	if r := do("OPTIONS", "/v1/agents/e2e/agui", other, preflight, ""); r.StatusCode != 403 || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight from another origin: %d %v", r.StatusCode, r.Header)
	}
	id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[{"content":"Hello."}]}}`)
	d.waitStatus(t, id)
	auth := map[string]string{"Authorization": "Bearer " + tokAcme}
	if r := do("GET", "/v1/runs/"+id+"/stream", allowed, auth, ""); r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != allowed {
		t.Fatalf("stream for the allowed origin: %d %v", r.StatusCode, r.Header)
	}
	if r := do("GET", "/v1/runs/"+id+"/stream", other, auth, ""); r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("stream for another origin: %d %v", r.StatusCode, r.Header)
	}
	// Every route family: preflights from the allowed origin name its
	// methods, from another origin are refused; answers carry the allowed
	// origin only.
	for path, method := range map[string]string{"/v1/runs": "POST", "/v1/runs/" + id: "GET", "/v1/runs/" + id + "/events": "GET",
		"/v1/runs/" + id + "/messages": "POST", "/v1/runs/" + id + "/tool-results": "POST", "/v1/runs/" + id + "/approvals/a-1": "POST",
		"/v1/runs/" + id + "/cancel": "POST", "/v1/runs/" + id + "/interrupt": "POST"} {
		pre := map[string]string{"Access-Control-Request-Method": method, "Access-Control-Request-Headers": "authorization, content-type, idempotency-key"}
		if r := do("OPTIONS", path, allowed, pre, ""); r.StatusCode != 204 || r.Header.Get("Access-Control-Allow-Origin") != allowed ||
			!strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), method) || !strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "Idempotency-Key") {
			t.Errorf("preflight of %s %s: %d %v", method, path, r.StatusCode, r.Header)
		}
		if r := do("OPTIONS", path, other, pre, ""); r.StatusCode != 403 || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight of %s from another origin: %d %v", path, r.StatusCode, r.Header)
		}
	}
	if r := do("GET", "/v1/runs/"+id, allowed, auth, ""); r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != allowed ||
		!strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "Retry-After") || r.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("a run for the allowed origin: %d %v", r.StatusCode, r.Header)
	}
	if r := do("GET", "/v1/runs/"+id, other, auth, ""); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a run for another origin: %v", r.Header)
	}
	if r := do("POST", "/v1/runs", allowed, nil, "{}"); r.StatusCode != 401 || r.Header.Get("Access-Control-Allow-Origin") != allowed {
		t.Fatalf("an error for the allowed origin: %d %v", r.StatusCode, r.Header)
	}
}

// TestCORSBrowserA2A: a page on an allowed origin (not the API's) loads
// the official A2A JavaScript SDK (tests/a2a/browser-entry.mjs, bundled
// with the pinned esbuild) and, in headless Chromium, discovers the e2e
// agent (the SDK's card request carries A2A-Version) and sends it a
// message; a fetch with W3C trace context (traceparent, tracestate) is
// answered too; the same page on another origin is refused by the
// browser.
func TestCORSBrowserA2A(t *testing.T) {
	if os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("starts baton dev itself, with flags of its own")
	}
	browser := chromiumPath(t)
	node := consoleNode(t)
	a2aNode := a2aServerNode(t)
	bundle := filepath.Join(t.TempDir(), "a2a-browser.js")
	build := exec.Command("node_modules/.bin/esbuild", "browser-entry.mjs", "--bundle", "--format=esm", "--platform=browser", "--log-level=warning", "--outfile="+bundle)
	build.Dir = "a2a"
	build.Env = append(os.Environ(), "PATH="+filepath.Dir(a2aNode)+":"+os.Getenv("PATH"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("bundle the A2A SDK for the browser: %v\n%s", err, out)
	}
	page := http.NewServeMux()
	page.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>A2A in a page</title><script type="module" src="/a2a-browser.js"></script>`))
	})
	page.HandleFunc("/a2a-browser.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		http.ServeFile(w, r, bundle)
	})
	allowed, refused := httptest.NewServer(page), httptest.NewServer(page)
	t.Cleanup(allowed.Close)
	t.Cleanup(refused.Close)
	d := startDev(t, append(storeModes(t)["embedded"], "--cors-origins", allowed.URL))

	var out struct {
		Allowed struct {
			Card  map[string]any
			Task  map[string]any
			Error string
		}
		Traced struct {
			Status int
			Error  string
		}
		Refused struct{ Error string }
	}
	runNodeWith(t, node, "console/a2a-browser.mjs", map[string]any{
		"chromium": browser, "allowed": allowed.URL + "/", "refused": refused.URL + "/", "api": d.base, "agent": "e2e", "token": tokAcme,
		"message": a2aMessage("m-browser", "Hello from a page", map[string]any{"content": "Hello, page."}),
	}, &out)
	if out.Allowed.Error != "" || out.Allowed.Card["name"] == nil || out.Allowed.Task["id"] == nil {
		b, _ := json.Marshal(out.Allowed)
		t.Fatalf("the allowed origin's page: %s", b)
	}
	if task := a2aWait(t, d, out.Allowed.Task["id"].(string), "TASK_STATE_COMPLETED"); answerText(task) != "Hello, page." {
		t.Fatalf("the page's task: %v", task)
	}
	if out.Traced.Status != 200 {
		t.Fatalf("a request with trace context from the allowed origin: %+v", out.Traced)
	}
	if !strings.Contains(out.Refused.Error, "Failed to fetch") {
		t.Fatalf("another origin's page was not refused: %+v", out.Refused)
	}
}
