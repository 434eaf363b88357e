//go:build e2e

package tests

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/toolsig"
)

// hookServer serves an agent's pre_tool_mediator (/mediate) and
// completion_policy (/complete) hooks on 127.0.0.1, verifying each
// request with toolsig: the mediator replaces the result of a stock check
// of SKU "STOP" and completes the run, and lets every other call proceed;
// the completion policy asks for "STOP" after the first result.
type hookServer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []map[string]any
	bad  []string
}

func newHookServer(t *testing.T, secret string) *hookServer {
	t.Helper()
	hs := &hookServer{}
	hs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req map[string]any
		_ = json.Unmarshal(raw, &req)
		hs.mu.Lock()
		hs.reqs = append(hs.reqs, req)
		if err := toolsig.Verify([]byte(secret), r.Header.Get(toolsig.HeaderTimestamp), r.Header.Get(toolsig.HeaderSignature), raw, time.Now()); err != nil {
			hs.bad = append(hs.bad, r.URL.Path+": "+err.Error())
		}
		if want, _ := req["idempotency_key"].(string); r.Header.Get("Idempotency-Key") != want || want == "" {
			hs.bad = append(hs.bad, r.URL.Path+": Idempotency-Key "+r.Header.Get("Idempotency-Key")+" vs idempotency_key "+want)
		}
		hs.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		params, _ := req["parameters"].(map[string]any)
		switch {
		case r.URL.Path == "/mediate" && params["sku"] == "STOP":
			io.WriteString(w, `{"action":"replace_result","result":{"success":true,"result":{"stopped_by":"mediator"}},"complete":true}`)
		case r.URL.Path == "/mediate":
			io.WriteString(w, `{"action":"proceed"}`)
		case r.URL.Path == "/complete" && req["tool_call_id"] == "call_a":
			io.WriteString(w, `{"complete":false,"message":"Now check STOP."}`)
		default:
			io.WriteString(w, `{"complete":false}`)
		}
	}))
	t.Cleanup(hs.srv.Close)
	return hs
}

func (hs *hookServer) snapshot() ([]map[string]any, []string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return append([]map[string]any(nil), hs.reqs...), append([]string(nil), hs.bad...)
}

// writeHookAgents writes an agents file whose agent "e2e-hooks" has the
// http stock tool at toolURL and hooks at hookURL, each signed with the
// secret in its environment variable.
func writeHookAgents(t *testing.T, toolURL, toolEnv, hookURL, hookEnv string) string {
	t.Helper()
	return writeAgentsFile(t, map[string]any{"agents": []any{map[string]any{
		"slug": "e2e-hooks", "model": map[string]any{"provider": "scripted"}, "allow_overrides": []any{"model"}, "max_turns": 8,
		"tools":             []any{stockTool(toolURL, toolEnv)},
		"pre_tool_mediator": map[string]any{"type": "http", "url": hookURL + "/mediate", "secret_env": hookEnv, "timeout": "10s"},
		"completion_policy": map[string]any{"type": "http", "url": hookURL + "/complete", "secret_env": hookEnv, "timeout": "10s"},
	}}})
}

// TestHooksEndToEnd runs an agent with a pre_tool_mediator and a
// completion_policy served by the test over http, on each store: the
// first stock check proceeds and executes; the completion policy adds a
// continuation message; the mediator replaces the second check's result
// and completes the run before the third scripted turn.
func TestHooksEndToEnd(t *testing.T) {
	eachStore(t, func(t *testing.T, args []string) { hooksEndToEnd(t, args) })
}

func hooksEndToEnd(t *testing.T, args []string) {
	const toolEnv, hookEnv = "BATON_E2E_HOOKS_TOOL_SECRET", "BATON_E2E_HOOKS_SECRET"
	toolSecret, hookSecret := "hooks-tool-secret-"+randomSuffix()+randomSuffix(), "hooks-secret-"+randomSuffix()+randomSuffix()
	t.Setenv(toolEnv, toolSecret)
	t.Setenv(hookEnv, hookSecret)
	tool := newHTTPTool(t, toolSecret)
	hooks := newHookServer(t, hookSecret)
	d := startDev(t, withAgentsFile(args, writeHookAgents(t, tool.srv.URL, toolEnv, hooks.srv.URL, hookEnv)))

	id := start(t, d, `{"agent":"e2e-hooks","messages":[{"role":"user","content":"stock?"}],"model":{"provider":"scripted","turns":[
		{"tool_calls":[{"id":"call_a","name":"inventory/check_stock","parameters":{"sku":"A-1"}}]},
		{"tool_calls":[{"id":"call_b","name":"inventory/check_stock","parameters":{"sku":"STOP"}}]},
		{"content":"never reached"}]}}`)
	v := d.waitStatus(t, id)
	res := result(v)
	if v["status"] != "completed" || res["completed"] != true || res["turn_count"] != float64(2) || res["final_content"] == "never reached" {
		t.Fatalf("run: %v", v)
	}
	executed := tool.executed(id)
	if len(executed) != 1 || executed[0] != "call_a" {
		t.Fatalf("the tool executed %v, want only call_a (the mediator replaced call_b)", executed)
	}
	results := res["tool_execution_results"].([]any)
	if len(results) != 2 {
		t.Fatalf("tool_execution_results %v", results)
	}
	last := results[1].(map[string]any)
	if r := last["result"].(map[string]any); last["tool_call_id"] != "call_b" || r["success"] != true || r["result"].(map[string]any)["stopped_by"] != "mediator" {
		t.Fatalf("call_b result %v", last)
	}
	var types []string
	for _, e := range res["events"].([]any) {
		types = append(types, e.(map[string]any)["type"].(string))
	}
	for _, want := range []string{"completion_policy_continue", "pre_tool_mediator_complete"} {
		if !strings.Contains(strings.Join(types, ","), want) {
			t.Errorf("no %s event in %v", want, types)
		}
	}
	continued := false
	for _, m := range res["messages"].([]any) {
		if msg := m.(map[string]any); msg["role"] == "user" && msg["content"] == "Now check STOP." {
			continued = true
		}
	}
	if !continued {
		t.Errorf("the completion policy's continuation message is not in the transcript: %v", res["messages"])
	}

	reqs, bad := hooks.snapshot()
	if len(bad) > 0 {
		t.Fatalf("hook requests that do not verify: %v", bad)
	}
	// Hooks may be asked again for the same decision (a retried step, a
	// commit retried on a version conflict); count distinct decisions.
	seen := map[string]map[string]any{}
	for _, r := range reqs {
		if r["run_id"] == id {
			seen[r["idempotency_key"].(string)] = r
		}
	}
	for _, key := range []string{id + ":call_a:pre_tool_mediator", id + ":call_b:pre_tool_mediator", id + ":call_a:completion_policy"} {
		if seen[key] == nil {
			t.Errorf("no hook request %s among %v", key, seen)
		}
	}
	if r := seen[id+":call_a:pre_tool_mediator"]; r != nil {
		decl, _ := r["declaration"].(map[string]any)
		principal, _ := r["principal"].(map[string]any)
		if r["agent"] != "e2e-hooks" || r["tool_name"] != "inventory/check_stock" || r["turn"] != float64(1) || decl["source"] != "inventory" || principal["tenant"] != "acme" {
			t.Errorf("mediator request %v", r)
		}
	}
	if r := seen[id+":call_a:completion_policy"]; r != nil {
		if out, _ := r["result"].(map[string]any); out["success"] != true || out["tool_name"] != "inventory/check_stock" {
			t.Errorf("completion request %v", r)
		}
	}
}

// TestHookMisconfiguredAtLoad: baton dev refuses an agents file with a
// hook it cannot build, naming the agent and the field.
func TestHookMisconfiguredAtLoad(t *testing.T) {
	if os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("starts baton dev itself")
	}
	for _, tc := range []struct {
		name string
		hook map[string]any
		want string
	}{
		{"secret not set", map[string]any{"type": "http", "url": "http://127.0.0.1:9/mediate", "secret_env": "BATON_E2E_HOOK_SECRET_NOT_SET"},
			"agent e2e-hooks: pre_tool_mediator: http executor: secret_env: "},
		{"bad on_error", map[string]any{"type": "http", "url": "http://127.0.0.1:9/mediate", "secret_env": "X", "on_error": "allow"},
			"agents[0].pre_tool_mediator.on_error: value must be one of 'reject', 'proceed', 'continue'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeAgentsFile(t, map[string]any{"agents": []any{map[string]any{"slug": "e2e-hooks", "model": map[string]any{"provider": "scripted"}, "pre_tool_mediator": tc.hook}}})
			devRefuses(t, file, tc.want)
		})
	}
}
