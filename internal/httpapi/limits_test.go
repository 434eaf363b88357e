package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
)

// TestRateLimits: past its burst a caller gets 429 rate_limited with
// Retry-After until a token is back; another token of the tenant has its
// own caller bucket but shares the tenant's; another tenant is not
// affected; unauthenticated requests take nothing.
func TestRateLimits(t *testing.T) {
	e := newEnvWith(t, func(c *app.Config) {
		c.Limits = app.Limits{CallerRate: core.RateLimit{Rate: 1, Burst: 2}, TenantRate: core.RateLimit{Rate: 2, Burst: 3}}
	})
	get := func(token string) (int, map[string]any, string) {
		t.Helper()
		st, body, resp := e.do(t, http.MethodGet, "/v1/runs", token, "", nil)
		return st, body, resp.Headers["Retry-After"]
	}
	for range 5 {
		if st, _, _ := get("not-a-token"); st != http.StatusUnauthorized {
			t.Fatalf("bad token: %d", st)
		}
	}
	for i := range 2 {
		if st, body, _ := get("tok-acme-123"); st != http.StatusOK {
			t.Fatalf("request %d: %d %v", i+1, st, body)
		}
	}
	st, body, retry := get("tok-acme-123")
	if st != http.StatusTooManyRequests || code(body) != "rate_limited" || retry != "1" {
		t.Fatalf("past the caller's burst: %d %v Retry-After %q", st, body, retry)
	}
	if d := body["error"].(map[string]any)["details"].(map[string]any); d["limit"] != "caller" {
		t.Fatalf("details %v", d)
	}
	// Another caller of acme: its own bucket, acme's third token.
	if st, body, _ := get("tok-readonly"); st != http.StatusOK {
		t.Fatalf("another caller: %d %v", st, body)
	}
	st, body, retry = get("tok-crm-writer")
	if st != http.StatusTooManyRequests || retry == "" || body["error"].(map[string]any)["details"].(map[string]any)["limit"] != "tenant" {
		t.Fatalf("past the tenant's burst: %d %v Retry-After %q", st, body, retry)
	}
	if st, _, _ := get("tok-globex-1"); st != http.StatusOK {
		t.Fatalf("another tenant: %d", st)
	}
	e.clock.T = e.clock.T.Add(2 * time.Second)
	if st, body, _ := get("tok-acme-123"); st != http.StatusOK {
		t.Fatalf("after the wait: %d %v", st, body)
	}
}

// TestActiveRunCap: at the cap the next start is a 429
// too_many_active_runs that stores nothing; a finished run frees its
// place.
func TestActiveRunCap(t *testing.T) {
	e := newEnvWith(t, func(c *app.Config) { c.Limits.MaxActiveRuns = 1 })
	if st, body, _ := e.do(t, http.MethodPost, "/v1/runs", "tok-acme-123", startBody, nil); st != http.StatusAccepted {
		t.Fatalf("first run: %d %v", st, body)
	}
	st, body, _ := e.do(t, http.MethodPost, "/v1/runs", "tok-acme-123", startBody, map[string]string{"Idempotency-Key": "k-2"})
	if st != http.StatusTooManyRequests || code(body) != "too_many_active_runs" {
		t.Fatalf("second run: %d %v", st, body)
	}
	if st, body, _ := e.do(t, http.MethodPost, "/v1/runs", "tok-globex-1", startBody, nil); st != http.StatusAccepted {
		t.Fatalf("another tenant: %d %v", st, body)
	}
	if _, list, _ := e.do(t, http.MethodGet, "/v1/runs", "tok-acme-123", "", nil); len(list["runs"].([]any)) != 1 {
		t.Fatalf("runs after the refusal: %v", list)
	}
	e.pump(t)
	// The refused key was not remembered: the same request now starts.
	if st, body, _ := e.do(t, http.MethodPost, "/v1/runs", "tok-acme-123", startBody, map[string]string{"Idempotency-Key": "k-2"}); st != http.StatusAccepted {
		t.Fatalf("after the first finished: %d %v", st, body)
	}
}
