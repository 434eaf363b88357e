//go:build e2e

package tests

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/toolsig"
)

// TestToolGuardrailHookEndToEnd runs an agent whose tool-stage guardrail
// is an http hook served by the test, on each store: the hook denies the
// stock check of SKU "BAD", which is not executed and whose result tells
// the model why, and the loop goes on to a second call that runs and a
// final answer.
func TestToolGuardrailHookEndToEnd(t *testing.T) {
	eachStore(t, func(t *testing.T, args []string) { toolGuardrailHook(t, args) })
}

func toolGuardrailHook(t *testing.T, args []string) {
	const toolEnv, hookEnv = "BATON_E2E_GUARD_TOOL_SECRET", "BATON_E2E_GUARD_HOOK_SECRET"
	toolSecret, hookSecret := "guard-tool-secret-"+randomSuffix()+randomSuffix(), "guard-hook-secret-"+randomSuffix()+randomSuffix()
	t.Setenv(toolEnv, toolSecret)
	t.Setenv(hookEnv, hookSecret)
	tool := newHTTPTool(t, toolSecret)
	var mu sync.Mutex
	var checked []map[string]any
	var bad []string
	guard := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req map[string]any
		_ = json.Unmarshal(raw, &req)
		mu.Lock()
		checked = append(checked, req)
		if err := toolsig.Verify([]byte(hookSecret), r.Header.Get(toolsig.HeaderTimestamp), r.Header.Get(toolsig.HeaderSignature), raw, time.Now()); err != nil {
			bad = append(bad, err.Error())
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if args, _ := req["arguments"].(map[string]any); args["sku"] == "BAD" {
			_, _ = io.WriteString(w, `{"allow":false,"reason":"SKU BAD is embargoed"}`)
			return
		}
		_, _ = io.WriteString(w, `{"allow":true}`)
	}))
	defer guard.Close()
	agents := writeAgentsFile(t, map[string]any{"agents": []any{map[string]any{
		"slug": "e2e-guard", "model": map[string]any{"provider": "scripted"}, "allow_overrides": []any{"model"}, "max_turns": 8,
		"tools":      []any{stockTool(tool.srv.URL, toolEnv)},
		"guardrails": map[string]any{"tool": []any{map[string]any{"type": "http", "url": guard.URL + "/guard", "secret_env": hookEnv, "timeout": "5s"}}},
	}}})
	d := startDev(t, withAgentsFile(args, agents))

	id := start(t, d, `{"agent":"e2e-guard","messages":[{"role":"user","content":"stock?"}],"model":{"provider":"scripted","turns":[
		{"tool_calls":[{"id":"call_bad","name":"inventory/check_stock","parameters":{"sku":"BAD"}}]},
		{"tool_calls":[{"id":"call_ok","name":"inventory/check_stock","parameters":{"sku":"A-1"}}]},
		{"content":"A-1 is in stock; BAD is embargoed."}]}}`)
	v := d.waitStatus(t, id)
	res := result(v)
	if v["status"] != "completed" || res["final_content"] != "A-1 is in stock; BAD is embargoed." {
		t.Fatalf("run: %v", v)
	}
	executed := tool.executed(id)
	if len(executed) != 1 || executed[0] != "call_ok" {
		t.Fatalf("the tool executed %v, want only call_ok", executed)
	}
	denied := false
	for _, m := range res["messages"].([]any) {
		msg := m.(map[string]any)
		meta, _ := msg["metadata"].(map[string]any)
		if msg["role"] == "tool_result" && meta["tool_call_id"] == "call_bad" {
			denied = strings.Contains(msg["content"].(string), "Tool denied by guardrail: SKU BAD is embargoed") && meta["error_type"] == "guardrail_denied"
			if !denied {
				t.Fatalf("call_bad's result %v", msg)
			}
		}
	}
	if !denied {
		t.Fatalf("no result for call_bad in %v", res["messages"])
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("guardrail requests that do not verify: %v", bad)
	}
	stages := map[string]bool{}
	for _, r := range checked {
		stages[r["stage"].(string)+" "+r["tool"].(string)] = true
	}
	if !stages["tool inventory/check_stock"] || len(stages) != 1 {
		t.Fatalf("guardrail requests %v", checked)
	}
}
