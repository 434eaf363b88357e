package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/httpapi"
)

const agentsJSON = `{"agents":[
 {"slug":"demo","model":{"provider":"scripted"},"allow_overrides":["model","budgets"],
  "tools":[{"name":"ability/echo","source":"go","description":"Echo.","executor":{"type":"go","handler":"echo"}},
           {"name":"ability/send_email","source":"go","description":"Mail.","action_policy":"preview","executor":{"type":"go","handler":"echo"}}]},
 {"slug":"locked","model":{"provider":"scripted","turns":[{"content":"fixed"}]}},
 {"slug":"remote","model":{"provider":"bedrock","model":"m"}},
 {"slug":"crm","model":{"provider":"scripted"},"allow_overrides":["model"],
  "tools":[{"name":"crm/update_contact","source":"go","description":"Update.","executor":{"type":"go","handler":"echo"},"access":{"scopes":["crm:write"]}},
           {"name":"crm/find_contact","source":"go","description":"Find.","executor":{"type":"go","handler":"echo"}}]}]}`

type env struct {
	api   *httpapi.API
	q     core.StepReceiver
	eng   *durable.Runner
	clock *core.FixedClock
}

func newEnv(t *testing.T) *env { return newEnvWith(t, nil) }

// newEnvWith builds the env with its configuration changed by edit.
func newEnvWith(t *testing.T, edit func(*app.Config)) *env {
	t.Helper()
	clock := &core.FixedClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}
	cfg := app.Config{Stores: app.Stores{Memory: true, Visibility: time.Minute}, Agents: app.Agents{JSON: agentsJSON},
		Providers: []string{"scripted"}, ExecuteTools: true, MaxBody: 64 << 10}
	if edit != nil {
		edit(&cfg)
	}
	a, err := app.Build(context.Background(), cfg, app.Deps{Clock: clock, IDs: &core.SequentialIDs{}, Log: discard})
	if err != nil {
		t.Fatal(err)
	}
	for tok, tenant := range map[string]string{"tok-acme-123": "acme", "tok-globex-1": "globex"} {
		_ = a.PutToken(context.Background(), app.Token{Token: tok, Tenant: tenant})
	}
	_ = a.PutToken(context.Background(), app.Token{Token: "tok-readonly", Tenant: "acme", Scopes: []string{httpapi.ScopeRunsRead}})
	_ = a.PutToken(context.Background(), app.Token{Token: "tok-crm-writer", Tenant: "acme", Scopes: append(app.Scopes(), "crm:write")})
	_ = a.PutToken(context.Background(), app.Token{Token: "tok-approver-1", Tenant: "acme", Label: "ops-lead", Scopes: []string{httpapi.ScopeRunsRead, httpapi.ScopeApprovalDecide}})
	return &env{api: a.API, q: a.Steps, eng: a.Runner, clock: clock}
}

var discard = slog.New(slog.DiscardHandler)

func (e *env) do(t *testing.T, method, path, token, body string, hdr map[string]string) (int, map[string]any, events.APIGatewayProxyResponse) {
	t.Helper()
	p, query, _ := strings.Cut(path, "?")
	req := events.APIGatewayProxyRequest{HTTPMethod: method, Path: p, Headers: map[string]string{}, QueryStringParameters: map[string]string{}, Body: body}
	if query != "" {
		for _, kv := range strings.Split(query, "&") {
			k, v, _ := strings.Cut(kv, "=")
			req.QueryStringParameters[k] = v
		}
	}
	if token != "" {
		req.Headers["authorization"] = "Bearer " + token
	}
	for k, v := range hdr {
		req.Headers[k] = v
	}
	return e.handle(t, req)
}

// handle serves req and decodes its JSON answer.
func (e *env) handle(t *testing.T, req events.APIGatewayProxyRequest) (int, map[string]any, events.APIGatewayProxyResponse) {
	t.Helper()
	resp, err := e.api.Handle(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if (resp.StatusCode == http.StatusNotModified || resp.StatusCode == http.StatusNoContent) && resp.Body == "" {
		return resp.StatusCode, nil, resp
	}
	if err := json.Unmarshal([]byte(resp.Body), &out); err != nil {
		t.Fatalf("%s %s: body is not JSON: %q", req.HTTPMethod, req.Path, resp.Body)
	}
	return resp.StatusCode, out, resp
}

func (e *env) pump(t *testing.T) {
	t.Helper()
	for i := 0; i < 100; i++ {
		ds, _ := e.q.Receive(context.Background(), 1, 0)
		if len(ds) == 0 {
			return
		}
		var s core.Step
		_ = json.Unmarshal(ds[0].Body, &s)
		if err := e.eng.HandleStep(context.Background(), s, durable.Attempt{ReceiveCount: 1, Owner: ds[0].ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
		_ = e.q.Delete(context.Background(), ds[0].ReceiptHandle)
	}
}

func code(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

const startBody = `{"agent":"demo","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[{"content":"hello"}]}}`

func TestErrorsAndAuth(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name, method, path, token, body string
		hdr                             map[string]string
		status                          int
		code                            string
	}{
		{"no token", "POST", "/v1/runs", "", startBody, nil, 401, "unauthorized"},
		{"bad token", "POST", "/v1/runs", "nope-nope", startBody, nil, 401, "unauthorized"},
		{"missing scope", "POST", "/v1/runs", "tok-readonly", startBody, nil, 403, "forbidden"},
		{"unknown route", "GET", "/v1/nothing", "tok-acme-123", "", nil, 404, "route_not_found"},
		{"wrong method", "DELETE", "/v1/runs", "tok-acme-123", "", nil, 405, "method_not_allowed"},
		{"unknown field", "POST", "/v1/runs", "tok-acme-123", `{"agent":"demo","messages":[{"role":"user","content":"x"}],"colour":"red"}`, nil, 400, "unknown_field"},
		{"not json", "POST", "/v1/runs", "tok-acme-123", `{"agent":`, nil, 400, "invalid_body"},
		{"trailing data", "POST", "/v1/runs", "tok-acme-123", startBody + `{}`, nil, 400, "invalid_body"},
		{"no messages", "POST", "/v1/runs", "tok-acme-123", `{"agent":"demo","messages":[]}`, nil, 400, "invalid_request"},
		{"bad message", "POST", "/v1/runs", "tok-acme-123", `{"agent":"demo","messages":[{"role":"robot","content":"x"}]}`, nil, 400, "invalid_message"},
		{"unknown agent", "POST", "/v1/runs", "tok-acme-123", `{"agent":"nope","messages":[{"role":"user","content":"x"}]}`, nil, 400, "unknown_agent"},
		{"server tool from caller", "POST", "/v1/runs", "tok-acme-123", `{"agent":"demo","messages":[{"role":"user","content":"x"}],"tools":[{"name":"ability/x","source":"s","description":"d"}]}`, nil, 400, "invalid_tool_declaration"},
		{"bad client tool", "POST", "/v1/runs", "tok-acme-123", `{"agent":"demo","messages":[{"role":"user","content":"x"}],"tools":[{"name":"client/x","description":"d","executor":"host"}]}`, nil, 400, "invalid_tool_declaration"},
		{"override not allowed", "POST", "/v1/runs", "tok-acme-123", `{"agent":"locked","messages":[{"role":"user","content":"x"}],"max_turns":3}`, nil, 400, "override_not_allowed"},
		{"provider not enabled", "POST", "/v1/runs", "tok-acme-123", `{"agent":"remote","messages":[{"role":"user","content":"x"}]}`, nil, 400, "provider_not_enabled"},
		{"bad budget", "POST", "/v1/runs", "tok-acme-123", `{"agent":"demo","messages":[{"role":"user","content":"x"}],"budgets":{"dollars":3}}`, nil, 400, "invalid_request"},
		{"too large", "POST", "/v1/runs", "tok-acme-123", `{"agent":"demo","messages":[{"role":"user","content":"` + strings.Repeat("x", 70<<10) + `"}]}`, nil, 413, "payload_too_large"},
		{"unknown run", "GET", "/v1/runs/r-404", "tok-acme-123", "", nil, 404, "not_found"},
		{"bad wait", "GET", "/v1/runs/r-404?wait=soon", "tok-acme-123", "", nil, 400, "invalid_query"},
		{"bad caller header", "POST", "/v1/runs", "tok-acme-123", startBody, map[string]string{"X-Agents-Api-Chain-Depth": "99"}, 400, "invalid_caller_context"},
		{"bad idempotency key", "POST", "/v1/runs", "tok-acme-123", startBody, map[string]string{"Idempotency-Key": "has space"}, 400, "invalid_idempotency_key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := e.do(t, tc.method, tc.path, tc.token, tc.body, tc.hdr)
			if status != tc.status || code(body) != tc.code {
				t.Fatalf("got %d %s, want %d %s: %v", status, code(body), tc.status, tc.code, body)
			}
			msg, _ := body["error"].(map[string]any)["message"].(string)
			if msg == "" {
				t.Fatal("error without a message")
			}
		})
	}
}

func TestRunLifecycleOverHTTP(t *testing.T) {
	e := newEnv(t)
	body := `{"agent":"demo","session_id":"s-web","messages":[{"role":"user","content":"plan"}],
	  "tools":[{"name":"client/get_calendar","description":"Calendar.","parameters":{"type":"object","required":["day"],"properties":{"day":{"type":"string"}}}}],
	  "model":{"provider":"scripted","turns":[
	    {"tool_calls":[{"id":"c1","name":"client/get_calendar","parameters":{"day":"mon"}}]},
	    {"tool_calls":[{"id":"c2","name":"ability/send_email","parameters":{"to":"ann"}}]},
	    {"content":"All set."}]}}`
	status, v, resp := e.do(t, "POST", "/v1/runs", "tok-acme-123", body, map[string]string{"Idempotency-Key": "k1"})
	if status != 202 || v["status"] != "queued" || resp.Headers["Location"] == "" {
		t.Fatalf("start: %d %v", status, v)
	}
	runID := v["run_id"].(string)
	// Replaying the same key and body returns the same response.
	status2, v2, resp2 := e.do(t, "POST", "/v1/runs", "tok-acme-123", body, map[string]string{"Idempotency-Key": "k1"})
	if status2 != 202 || v2["run_id"] != runID || resp2.Headers["Idempotent-Replayed"] != "true" {
		t.Fatalf("replay: %d %v", status2, v2)
	}
	if st, b, _ := e.do(t, "POST", "/v1/runs", "tok-acme-123", startBody, map[string]string{"Idempotency-Key": "k1"}); st != 422 || code(b) != "idempotency_key_reused" {
		t.Fatalf("reuse: %d %v", st, b)
	}
	// A second run on the busy session is refused.
	if st, b, _ := e.do(t, "POST", "/v1/runs", "tok-acme-123", strings.Replace(startBody, `"agent":"demo"`, `"agent":"demo","session_id":"s-web"`, 1), nil); st != 409 || code(b) != "transcript_lock_contention" {
		t.Fatalf("busy session: %d %v", st, b)
	}
	e.pump(t)
	_, v, _ = e.do(t, "GET", "/v1/runs/"+runID, "tok-acme-123", "", nil)
	if v["status"] != "runtime_tool_pending" {
		t.Fatalf("status %v", v["status"])
	}
	reqs := v["pending"].(map[string]any)["tool_requests"].([]any)
	reqID := reqs[0].(map[string]any)["request_id"].(string)
	// Another tenant sees nothing.
	if st, b, _ := e.do(t, "GET", "/v1/runs/"+runID, "tok-globex-1", "", nil); st != 404 || code(b) != "not_found" {
		t.Fatalf("other tenant: %d %v", st, b)
	}
	if st, b, _ := e.do(t, "POST", "/v1/runs/"+runID+"/tool-results", "tok-acme-123", `{"request_id":"`+reqID+`","success":true,"result":{"free":true},"extra":1}`, nil); st != 400 || code(b) != "unknown_field" {
		t.Fatalf("unknown field on submit: %d %v", st, b)
	}
	st, v, _ := e.do(t, "POST", "/v1/runs/"+runID+"/tool-results", "tok-acme-123", `{"request_id":"`+reqID+`","success":true,"result":{"free":true}}`, nil)
	if st != 202 || v["status"] != "queued" {
		t.Fatalf("submit: %d %v", st, v)
	}
	if st, b, _ := e.do(t, "POST", "/v1/runs/"+runID+"/tool-results", "tok-acme-123", `{"request_id":"`+reqID+`","success":true}`, nil); st != 409 || code(b) != "already_decided" {
		t.Fatalf("second submit: %d %v", st, b)
	}
	e.pump(t)
	_, v, _ = e.do(t, "GET", "/v1/runs/"+runID, "tok-acme-123", "", nil)
	acts := v["pending"].(map[string]any)["actions"].([]any)
	actID := acts[0].(map[string]any)["action_id"].(string)
	if st, b, _ := e.do(t, "POST", "/v1/runs/"+runID+"/approvals/"+actID, "tok-acme-123", `{"decision":"maybe"}`, nil); st != 400 {
		t.Fatalf("bad decision: %d %v", st, b)
	}
	if st, v, _ := e.do(t, "POST", "/v1/runs/"+runID+"/approvals/"+actID, "tok-acme-123", `{"decision":"accept"}`, nil); st != 202 || v["status"] != "queued" {
		t.Fatalf("approve: %d %v", st, v)
	}
	if st, b, _ := e.do(t, "POST", "/v1/runs/"+runID+"/approvals/"+actID, "tok-acme-123", `{"decision":"reject"}`, nil); st != 409 || code(b) != "already_decided" {
		t.Fatalf("second decision: %d %v", st, b)
	}
	e.pump(t)
	_, v, _ = e.do(t, "GET", "/v1/runs/"+runID+"?wait=1", "tok-acme-123", "", nil)
	result := v["result"].(map[string]any)
	if v["status"] != "completed" || result["final_content"] != "All set." || result["schema"] != "agents-api.conversation-result" {
		t.Fatalf("final view: %v", v)
	}
	// Events page and messages page.
	_, evs, _ := e.do(t, "GET", "/v1/runs/"+runID+"/events?after=2&limit=3", "tok-acme-123", "", nil)
	list := evs["events"].([]any)
	if len(list) != 3 || list[0].(map[string]any)["seq"].(float64) != 3 || evs["next"].(float64) != 5 {
		t.Fatalf("events page: %v", evs)
	}
	_, ms, _ := e.do(t, "GET", "/v1/runs/"+runID+"/messages?after=1&limit=2", "tok-acme-123", "", nil)
	mlist := ms["messages"].([]any)
	if len(mlist) != 2 || mlist[0].(map[string]any)["seq"].(float64) != 2 || ms["next"].(float64) != 3 {
		t.Fatalf("messages page: %v", ms)
	}
	_, ms, _ = e.do(t, "GET", "/v1/runs/"+runID+"/messages?after=100", "tok-acme-123", "", nil)
	if len(ms["messages"].([]any)) != 0 || ms["next"].(float64) != 100 {
		t.Fatalf("empty page: %v", ms)
	}
	// Events wait returns at once for a finished run.
	_, evs, _ = e.do(t, "GET", "/v1/runs/"+runID+"/events?after=1000&wait=25", "tok-acme-123", "", nil)
	if len(evs["events"].([]any)) != 0 {
		t.Fatalf("events after the end: %v", evs)
	}
	// Cancel and steer on a finished run are conflicts.
	if st, b, _ := e.do(t, "POST", "/v1/runs/"+runID+"/cancel", "tok-acme-123", "", nil); st != 409 || code(b) != "run_finished" {
		t.Fatalf("cancel finished: %d %v", st, b)
	}
	if st, b, _ := e.do(t, "POST", "/v1/runs/"+runID+"/messages", "tok-acme-123", `{"content":"more"}`, nil); st != 409 {
		t.Fatalf("steer finished: %d %v", st, b)
	}
}

func TestCancelSteerAndBase64(t *testing.T) {
	e := newEnv(t)
	body := `{"agent":"demo","messages":[{"role":"user","content":"x"}],"tools":[{"name":"client/ask","description":"Ask."}],
	  "model":{"provider":"scripted","turns":[{"tool_calls":[{"id":"c1","name":"client/ask","parameters":{}}]},{"content":"done"}]}}`
	req := events.APIGatewayProxyRequest{HTTPMethod: http.MethodPost, Path: "/v1/runs", Headers: map[string]string{"Authorization": "Bearer tok-acme-123"},
		Body: base64.StdEncoding.EncodeToString([]byte(body)), IsBase64Encoded: true}
	resp, _ := e.api.Handle(context.Background(), req)
	if resp.StatusCode != 202 {
		t.Fatalf("base64 body: %d %s", resp.StatusCode, resp.Body)
	}
	var v map[string]any
	_ = json.Unmarshal([]byte(resp.Body), &v)
	runID := v["run_id"].(string)
	e.pump(t)
	if st, b, _ := e.do(t, "POST", "/v1/runs/"+runID+"/messages", "tok-acme-123", `{"content":""}`, nil); st != 400 {
		t.Fatalf("empty steer: %d %v", st, b)
	}
	if st, v, _ := e.do(t, "POST", "/v1/runs/"+runID+"/messages", "tok-acme-123", `{"content":"focus"}`, nil); st != 202 || v["status"] != "runtime_tool_pending" {
		t.Fatalf("steer while paused: %d %v", st, v)
	}
	st, v, _ := e.do(t, "POST", "/v1/runs/"+runID+"/cancel", "tok-acme-123", `{"reason":"user left"}`, nil)
	if st != 202 || v["status"] != "cancelled" {
		t.Fatalf("cancel: %d %v", st, v)
	}
	msgs := v["result"].(map[string]any)["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "tool_result" || last["metadata"].(map[string]any)["error_type"] != "cancelled" {
		t.Fatalf("cancel left an open call: %v", last)
	}
	_ = fmt.Sprint
}

func TestIdempotencyKeyInFlight(t *testing.T) {
	e := newEnv(t)
	// Another request with this key is still being handled.
	scope := "acme POST /v1/runs"
	sum := sha256.Sum256([]byte(startBody))
	if rec, err := e.api.Idem.BeginIdempotent(context.Background(), scope, "busy-key", hex.EncodeToString(sum[:]), e.clock.T, time.Hour); err != nil || rec != nil {
		t.Fatal(rec, err)
	}
	st, b, resp := e.do(t, "POST", "/v1/runs", "tok-acme-123", startBody, map[string]string{"Idempotency-Key": "busy-key"})
	if st != 409 || code(b) != "idempotency_key_in_flight" {
		t.Fatalf("in flight: %d %v", st, b)
	}
	// A request that failed on the server side (the store is down: 500)
	// frees its key, so the client's retry with the same key runs anew.
	down := &sessionHeadsDown{Store: e.eng.Store, down: true}
	e.eng.Store = down
	st, b, _ = e.do(t, "POST", "/v1/runs", "tok-acme-123", startBody, map[string]string{"Idempotency-Key": "k500"})
	if st != 500 || code(b) != "internal" {
		t.Fatalf("store down: %d %v", st, b)
	}
	down.down = false
	st, b, resp = e.do(t, "POST", "/v1/runs", "tok-acme-123", startBody, map[string]string{"Idempotency-Key": "k500"})
	if st != 202 || resp.Headers["Idempotent-Replayed"] != "" || b["run_id"] == nil {
		t.Fatalf("retry after a 5xx: %d %v %v", st, resp.Headers, b)
	}
	st, b, _ = e.do(t, "POST", "/v1/runs", "tok-acme-123", `{"agent":"nope","messages":[{"role":"user","content":"x"}]}`, map[string]string{"Idempotency-Key": "k400"})
	if st != 400 {
		t.Fatalf("%d %v", st, b)
	}
	// Client errors are remembered like successes.
	st2, _, resp2 := e.do(t, "POST", "/v1/runs", "tok-acme-123", `{"agent":"nope","messages":[{"role":"user","content":"x"}]}`, map[string]string{"Idempotency-Key": "k400"})
	if st2 != 400 || resp2.Headers["Idempotent-Replayed"] != "true" {
		t.Fatalf("replayed 400: %d %v", st2, resp2.Headers)
	}
}

// sessionHeadsDown fails session reads while down, as a store outage would.
type sessionHeadsDown struct {
	durable.Store
	down bool
}

func (s *sessionHeadsDown) SessionHead(ctx context.Context, tenant, sessionID string) (core.SessionHead, error) {
	if s.down {
		return core.SessionHead{}, errors.New("store unavailable")
	}
	return s.Store.SessionHead(ctx, tenant, sessionID)
}

// TestApprovalDecidedNamesTheApprover: the approval_decided event and the
// call's audit record name the principal whose token decided (not the
// one that started the run), by tenant, token label, auth source and a
// prefix of the token's hash, never by the token itself.
func TestApprovalDecidedNamesTheApprover(t *testing.T) {
	sum := sha256.Sum256([]byte("tok-approver-1"))
	want := map[string]any{"tenant": "acme", "actor_id": "ops-lead", "auth_source": "bearer_token", "request_context": "rest",
		"token_id": hex.EncodeToString(sum[:])[:16]}
	for _, decision := range []string{"accept", "reject"} {
		t.Run(decision, func(t *testing.T) {
			e := newEnv(t)
			body := `{"agent":"demo","messages":[{"role":"user","content":"mail ann"}],"model":{"provider":"scripted","turns":[
			    {"tool_calls":[{"id":"c1","name":"ability/send_email","parameters":{"to":"ann"}}]},{"content":"Done."}]}}`
			_, v, _ := e.do(t, "POST", "/v1/runs", "tok-acme-123", body, nil)
			runID := v["run_id"].(string)
			e.pump(t)
			_, v, _ = e.do(t, "GET", "/v1/runs/"+runID, "tok-acme-123", "", nil)
			actID := v["pending"].(map[string]any)["actions"].([]any)[0].(map[string]any)["action_id"].(string)
			if st, b, _ := e.do(t, "POST", "/v1/runs/"+runID+"/approvals/"+actID, "tok-approver-1", `{"decision":"`+decision+`"}`, nil); st != 202 {
				t.Fatalf("decide: %d %v", st, b)
			}
			e.pump(t)
			_, evs, resp := e.do(t, "GET", "/v1/runs/"+runID+"/events?limit=1000", "tok-acme-123", "", nil)
			var decided map[string]any
			for _, ev := range evs["events"].([]any) {
				if ev := ev.(map[string]any); ev["type"] == "approval_decided" {
					decided = ev["data"].(map[string]any)
				}
			}
			if decided == nil || decided["decision"] != decision || fmt.Sprint(decided["resolver"]) != fmt.Sprint(want) {
				t.Fatalf("approval_decided = %v, want decision %s by %v", decided, decision, want)
			}
			st, v, view := e.do(t, "GET", "/v1/runs/"+runID, "tok-acme-123", "", nil)
			if st != 200 || v["status"] != "completed" {
				t.Fatalf("run: %d %v", st, v)
			}
			audit := v["result"].(map[string]any)["tool_audit_events"].([]any)
			approval, _ := audit[0].(map[string]any)["approval"].(map[string]any)
			if approval["decision"] != decision || fmt.Sprint(approval["resolver"]) != fmt.Sprint(want) {
				t.Fatalf("audit approval = %v, want decision %s by %v", approval, decision, want)
			}
			for _, b := range []string{resp.Body, view.Body} {
				if strings.Contains(b, "tok-approver-1") || strings.Contains(b, hex.EncodeToString(sum[:])) {
					t.Fatal("a response holds the approver's token or its whole hash")
				}
			}
		})
	}
}

// TestToolAccessByTokenScopes: a tool whose access block requires
// crm:write is offered to the model, and runs, only in runs started by a
// token holding that scope; otherwise a call to it by name fails with
// tool_not_found and the ungated tool still runs.
func TestToolAccessByTokenScopes(t *testing.T) {
	body := `{"agent":"crm","messages":[{"role":"user","content":"update ann"}],"model":{"provider":"scripted","turns":[
	    {"tool_calls":[{"id":"c1","name":"crm/update_contact","parameters":{"who":"ann"}},{"id":"c2","name":"crm/find_contact","parameters":{"who":"ann"}}]},
	    {"content":"Done."}]}}`
	for _, tc := range []struct {
		token   string
		visible bool
	}{{"tok-acme-123", false}, {"tok-crm-writer", true}} {
		t.Run(tc.token, func(t *testing.T) {
			e := newEnv(t)
			st, v, _ := e.do(t, "POST", "/v1/runs", tc.token, body, nil)
			if st != 202 {
				t.Fatalf("start: %d %v", st, v)
			}
			runID := v["run_id"].(string)
			e.pump(t)
			_, v, _ = e.do(t, "GET", "/v1/runs/"+runID, tc.token, "", nil)
			result := v["result"].(map[string]any)
			if v["status"] != "completed" {
				t.Fatalf("run: %v", v)
			}
			var offered any
			for _, ev := range result["events"].([]any) {
				if ev := ev.(map[string]any); ev["type"] == "run_started" {
					offered = ev["data"].(map[string]any)["tools"]
				}
			}
			if got := fmt.Sprint(offered); strings.Contains(got, "crm/update_contact") != tc.visible || !strings.Contains(got, "crm/find_contact") {
				t.Errorf("tools offered to the model: %s", got)
			}
			results := result["tool_execution_results"].([]any)
			gated := results[0].(map[string]any)["result"].(map[string]any)
			if tc.visible && gated["success"] != true || !tc.visible && (gated["success"] != false || gated["error_type"] != "tool_not_found") {
				t.Errorf("gated call: %v", gated)
			}
			if open := results[1].(map[string]any)["result"].(map[string]any); open["success"] != true {
				t.Errorf("ungated call: %v", open)
			}
		})
	}
}
