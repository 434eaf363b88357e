package httpapi_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
)

func TestCORS(t *testing.T) {
	a, err := app.Build(context.Background(), app.Config{Stores: app.Stores{Memory: true, Visibility: time.Minute}, Agents: app.Agents{JSON: agentsJSON},
		Providers: []string{"scripted"}, MaxBody: 64 << 10, CORSOrigins: []string{"https://app.example.com"},
		Tokens: []app.Token{{Token: "tok-acme-123", Tenant: "acme"}}}, app.Deps{Clock: &core.FixedClock{T: time.Now()}, IDs: &core.SequentialIDs{}, Log: discard})
	if err != nil {
		t.Fatal(err)
	}
	handle := func(method, path, origin string, hdr map[string]string) events.APIGatewayProxyResponse {
		req := events.APIGatewayProxyRequest{HTTPMethod: method, Path: path, Headers: map[string]string{"Authorization": "Bearer tok-acme-123"}}
		if origin != "" {
			req.Headers["Origin"] = origin
		}
		for k, v := range hdr {
			req.Headers[k] = v
		}
		resp, err := a.API.Handle(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	pre := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"}

	r := handle("OPTIONS", "/v1/agents/demo/agui", "https://app.example.com", pre)
	if r.StatusCode != 204 || r.Headers["Access-Control-Allow-Origin"] != "https://app.example.com" || r.Headers["Access-Control-Allow-Methods"] != "POST, OPTIONS" ||
		r.Headers["Access-Control-Allow-Headers"] == "" || r.Headers["Vary"] != "Origin" {
		t.Fatalf("preflight: %d %v", r.StatusCode, r.Headers)
	}
	// The headers browser clients add on their own: the A2A JS client's
	// A2A-Version (the agent card's GET included), OpenTelemetry's trace
	// context, a conditional read's If-None-Match.
	for _, h := range []string{"A2A-Version", "A2A-Extensions", "traceparent", "tracestate", "If-None-Match"} {
		if !slices.Contains(strings.Split(r.Headers["Access-Control-Allow-Headers"], ", "), h) {
			t.Errorf("preflight allows %q, not %s", r.Headers["Access-Control-Allow-Headers"], h)
		}
	}
	r = handle("OPTIONS", "/a2a/demo/.well-known/agent-card.json", "https://app.example.com", map[string]string{"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "a2a-version"})
	if r.StatusCode != 204 || r.Headers["Access-Control-Allow-Origin"] != "https://app.example.com" || !strings.Contains(r.Headers["Access-Control-Allow-Headers"], "A2A-Version") {
		t.Fatalf("agent card preflight: %d %v", r.StatusCode, r.Headers)
	}
	r = handle("OPTIONS", "/v1/runs/r-1/stream", "https://app.example.com", pre)
	if r.StatusCode != 204 || r.Headers["Access-Control-Allow-Methods"] != "GET, OPTIONS" {
		t.Fatalf("stream preflight: %d %v", r.StatusCode, r.Headers)
	}
	for _, origin := range []string{"https://evil.example.com", ""} {
		r = handle("OPTIONS", "/v1/agents/demo/agui", origin, pre)
		if r.StatusCode != 403 || r.Headers["Access-Control-Allow-Origin"] != "" {
			t.Fatalf("preflight from %q: %d %v", origin, r.StatusCode, r.Headers)
		}
		if origin != "" && !strings.Contains(r.Body, "--cors-origins "+origin) {
			t.Fatalf("the refusal does not say how to allow %s: %s", origin, r.Body)
		}
	}
	// Every route family: its own methods.
	for path, methods := range map[string]string{
		"/v1/runs": "POST, GET, OPTIONS", "/v1/runs/r-1": "GET, OPTIONS", "/v1/runs/r-1/events": "GET, OPTIONS", "/v1/runs/r-1/messages": "GET, POST, OPTIONS",
		"/v1/runs/r-1/tool-results": "POST, OPTIONS", "/v1/runs/r-1/approvals/a-1": "POST, OPTIONS", "/v1/runs/r-1/cancel": "POST, OPTIONS",
		"/v1/runs/r-1/interrupt": "POST, OPTIONS",
	} {
		r = handle("OPTIONS", path, "https://app.example.com", pre)
		if r.StatusCode != 204 || r.Headers["Access-Control-Allow-Methods"] != methods || !strings.Contains(r.Headers["Access-Control-Allow-Headers"], "Idempotency-Key") {
			t.Errorf("preflight of %s: %d %v", path, r.StatusCode, r.Headers)
		}
		if r = handle("OPTIONS", path, "https://evil.example.com", pre); r.StatusCode != 403 || r.Headers["Access-Control-Allow-Origin"] != "" {
			t.Errorf("preflight of %s from another origin: %d %v", path, r.StatusCode, r.Headers)
		}
	}
	if r = handle("OPTIONS", "/v1/nowhere", "https://app.example.com", pre); r.StatusCode != 404 || r.Headers["Access-Control-Allow-Origin"] != "" {
		t.Fatalf("no route: %d %v", r.StatusCode, r.Headers)
	}

	// Responses (buffered and streamed, success and error) carry the
	// origin only when it is allowed.
	body := `{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":"hi"}],"forwardedProps":{"baton":{"model":{"provider":"scripted","turns":[{"content":"ok"}]}}}}`
	req := func(origin, b string) events.APIGatewayProxyRequest {
		return events.APIGatewayProxyRequest{HTTPMethod: "POST", Path: "/v1/agents/demo/agui", Body: b,
			Headers: map[string]string{"Authorization": "Bearer tok-acme-123", "Origin": origin}}
	}
	resp, stream := a.API.Stream(context.Background(), req("https://app.example.com", body))
	if stream == nil || resp.Headers["Access-Control-Allow-Origin"] != "https://app.example.com" {
		t.Fatalf("stream: %v", resp.Headers)
	}
	if resp, _ = a.API.Stream(context.Background(), req("https://app.example.com", "{")); resp.StatusCode != 400 || resp.Headers["Access-Control-Allow-Origin"] != "https://app.example.com" {
		t.Fatalf("stream error: %d %v", resp.StatusCode, resp.Headers)
	}
	if resp, _ = a.API.Stream(context.Background(), req("https://evil.example.com", "{")); resp.Headers["Access-Control-Allow-Origin"] != "" {
		t.Fatalf("another origin: %v", resp.Headers)
	}
	if r = handle("GET", "/v1/runs/r-nope/stream", "https://app.example.com", nil); r.Headers["Access-Control-Allow-Origin"] != "https://app.example.com" {
		t.Fatalf("buffered: %d %v", r.StatusCode, r.Headers)
	}
	if r = handle("GET", "/v1/runs/r-nope", "https://app.example.com", nil); r.StatusCode != 404 || r.Headers["Access-Control-Allow-Origin"] != "https://app.example.com" ||
		!strings.Contains(r.Headers["Access-Control-Expose-Headers"], "Retry-After") {
		t.Fatalf("an error answer: %d %v", r.StatusCode, r.Headers)
	}
	if r = handle("GET", "/v1/runs/r-nope", "https://evil.example.com", nil); r.Headers["Access-Control-Allow-Origin"] != "" {
		t.Fatalf("another origin: %v", r.Headers)
	}
}
