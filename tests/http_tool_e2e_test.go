//go:build e2e

package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/toolsig"
)

// httpToolCall is one request received by the test's http tool.
type httpToolCall struct {
	key       string
	verifyErr error
	body      struct {
		ToolName   string         `json:"tool_name"`
		ToolCallID string         `json:"tool_call_id"`
		RunID      string         `json:"run_id"`
		SessionID  string         `json:"session_id"`
		Parameters map[string]any `json:"parameters"`
	}
	extraFields []string
}

// httpTool is an http tool endpoint on 127.0.0.1 that verifies every
// request with toolsig and counts executions per Idempotency-Key.
type httpTool struct {
	srv    *httptest.Server
	secret string
	mu     sync.Mutex
	calls  []httpToolCall
	byKey  map[string]int
}

func newHTTPTool(t *testing.T, secret string) *httpTool {
	t.Helper()
	ht := &httpTool{secret: secret, byKey: map[string]int{}}
	ht.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		c := httpToolCall{key: r.Header.Get("Idempotency-Key")}
		c.verifyErr = toolsig.Verify([]byte(secret), r.Header.Get(toolsig.HeaderTimestamp), r.Header.Get(toolsig.HeaderSignature), raw, time.Now())
		_ = json.Unmarshal(raw, &c.body)
		var all map[string]any
		_ = json.Unmarshal(raw, &all)
		for k := range all {
			switch k {
			case "tool_name", "tool_call_id", "run_id", "session_id", "parameters":
			default:
				c.extraFields = append(c.extraFields, k)
			}
		}
		ht.mu.Lock()
		ht.calls = append(ht.calls, c)
		ht.byKey[c.key]++
		ht.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if c.verifyErr != nil {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"success":false,"error":"bad signature"}`)
			return
		}
		if c.body.Parameters["fail"] == true {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":"inventory offline"}`)
			return
		}
		fmt.Fprintf(w, `{"success":true,"result":{"sku":%q,"in_stock":3,"call":%q}}`, c.body.Parameters["sku"], c.body.ToolCallID)
	}))
	t.Cleanup(ht.srv.Close)
	return ht
}

func (ht *httpTool) snapshot() ([]httpToolCall, map[string]int) {
	ht.mu.Lock()
	defer ht.mu.Unlock()
	keys := map[string]int{}
	for k, v := range ht.byKey {
		keys[k] = v
	}
	return append([]httpToolCall(nil), ht.calls...), keys
}

// executed lists the tool call ids the tool executed for the run, in
// order.
func (ht *httpTool) executed(runID string) []string {
	calls, _ := ht.snapshot()
	var ids []string
	for _, c := range calls {
		if c.body.RunID == runID {
			ids = append(ids, c.body.ToolCallID)
		}
	}
	return ids
}

// writeHTTPToolAgents writes an agents file whose agent "e2e-http" has
// an http server tool pointed at url, signed with the secret in env.
func writeHTTPToolAgents(t *testing.T, url, env string) string {
	t.Helper()
	file := map[string]any{"agents": []any{map[string]any{
		"slug": "e2e-http", "label": "End-to-end http tool agent", "model": map[string]any{"provider": "scripted"},
		"allow_overrides": []any{"model", "max_turns", "budgets"}, "max_turns": 8,
		"tools": []any{stockTool(url, env)},
	}}}
	return writeAgentsFile(t, file)
}

// stockTool is the agents-file declaration of inventory/check_stock, an
// http tool served at url+"/check_stock" (newHTTPTool) and signed with
// the secret in env.
func stockTool(url, env string) map[string]any {
	return map[string]any{
		"name": "inventory/check_stock", "source": "inventory", "description": "Check the stock of a SKU.",
		"parameters": map[string]any{"type": "object", "required": []any{"sku"},
			"properties": map[string]any{"sku": map[string]any{"type": "string"}, "fail": map[string]any{"type": "boolean"}}},
		"executor": map[string]any{"type": "http", "url": url + "/check_stock", "secret_env": env, "timeout": "10s"},
	}
}

// writeAgentsFile writes an agents file for baton dev in a temporary
// directory and returns its path.
func writeAgentsFile(t *testing.T, file map[string]any) string {
	t.Helper()
	b, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// withAgentsFile replaces the --agents value of baton dev's arguments.
func withAgentsFile(args []string, path string) []string {
	out := append([]string(nil), args...)
	for i := range out {
		if out[i] == "--agents" && i+1 < len(out) {
			out[i+1] = path
		}
	}
	return out
}

// TestHTTPToolEndToEnd runs an agent whose server tool is an http tool
// served by the test: every call is executed exactly once, signed with
// the secret baton dev read from its environment, keyed
// <run_id>:<tool_call_id>, and its result lands in the envelope.
func TestHTTPToolEndToEnd(t *testing.T) {
	secret := "e2e-http-tool-secret-" + randomSuffix() + randomSuffix()
	const env = "BATON_E2E_INVENTORY_SECRET"
	t.Setenv(env, secret) // baton dev inherits the test's environment
	tool := newHTTPTool(t, secret)
	d := startDev(t, withAgentsFile(devArgs(t), writeHTTPToolAgents(t, tool.srv.URL, env)))

	t.Run("two turns, each call executed once", func(t *testing.T) {
		session := "s-http-" + randomSuffix()
		id := start(t, d, `{"agent":"e2e-http","session_id":"`+session+`","messages":[{"role":"user","content":"stock?"}],"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"call_a","name":"inventory/check_stock","parameters":{"sku":"A-1"}}]},
			{"tool_calls":[{"id":"call_b","name":"inventory/check_stock","parameters":{"sku":"B-2"}}]},
			{"content":"A-1 and B-2 are in stock."}]}}`)
		v := d.waitStatus(t, id)
		if v["status"] != "completed" || result(v)["final_content"] != "A-1 and B-2 are in stock." {
			t.Fatalf("%v", v)
		}
		// A barrier before counting: the session's steps share one FIFO
		// message group, so once a later run on the session has completed,
		// every step message of this run (a duplicate delivery or a retry
		// included) has been handled.
		barrier := start(t, d, `{"agent":"e2e-http","session_id":"`+session+`","messages":[{"role":"user","content":"thanks"}],"model":{"provider":"scripted","turns":[{"content":"ok"}]}}`)
		if bv := d.waitStatus(t, barrier); bv["status"] != "completed" {
			t.Fatalf("barrier run: %v", bv)
		}
		calls, byKey := tool.snapshot()
		var mine []httpToolCall
		for _, c := range calls {
			if c.body.RunID == id {
				mine = append(mine, c)
			}
		}
		if len(mine) != 2 {
			t.Fatalf("the tool saw %d requests for run %s, want 2: %+v", len(mine), id, mine)
		}
		for i, want := range []struct{ callID, sku string }{{"call_a", "A-1"}, {"call_b", "B-2"}} {
			c := mine[i]
			if c.verifyErr != nil {
				t.Errorf("call %s: signature does not verify: %v", want.callID, c.verifyErr)
			}
			if c.key != id+":"+want.callID || byKey[c.key] != 1 {
				t.Errorf("call %s: Idempotency-Key %q executed %d times, want %s once", want.callID, c.key, byKey[c.key], id+":"+want.callID)
			}
			if c.body.ToolName != "inventory/check_stock" || c.body.ToolCallID != want.callID || c.body.SessionID != v["session_id"] ||
				c.body.Parameters["sku"] != want.sku || len(c.extraFields) != 0 {
				t.Errorf("call %s: body %+v extra %v", want.callID, c.body, c.extraFields)
			}
		}
		results := result(v)["tool_execution_results"].([]any)
		if len(results) != 2 {
			t.Fatalf("tool_execution_results %v", results)
		}
		for i, want := range []struct{ callID, sku string }{{"call_a", "A-1"}, {"call_b", "B-2"}} {
			r := results[i].(map[string]any)
			res := r["result"].(map[string]any)
			out, _ := res["result"].(map[string]any)
			if r["tool_call_id"] != want.callID || res["success"] != true || out["sku"] != want.sku || out["call"] != want.callID || out["in_stock"] != float64(3) {
				t.Errorf("result %d: %v", i, r)
			}
		}
		var toolMsgs int
		for _, m := range result(v)["messages"].([]any) {
			mm := m.(map[string]any)
			if mm["role"] == "tool_result" && strings.Contains(mm["content"].(string), `"in_stock"`) {
				toolMsgs++
			}
		}
		if toolMsgs != 2 {
			t.Errorf("%d tool_result messages carry the tool's output, want 2", toolMsgs)
		}
		raw, _ := json.Marshal(v)
		if strings.Contains(string(raw), secret) || strings.Contains(d.out.String(), secret) {
			t.Fatal("the signing secret appears in the run view or in baton dev's logs")
		}
	})

	t.Run("a non-2xx answer is a failed result and the run goes on", func(t *testing.T) {
		id := start(t, d, `{"agent":"e2e-http","messages":[{"role":"user","content":"stock?"}],"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"call_x","name":"inventory/check_stock","parameters":{"sku":"X-9","fail":true}}]},
			{"content":"The inventory is offline."}]}}`)
		v := d.waitStatus(t, id)
		if v["status"] != "completed" {
			t.Fatalf("%v", v)
		}
		res := result(v)["tool_execution_results"].([]any)[0].(map[string]any)["result"].(map[string]any)
		if res["success"] != false || res["error_type"] != "http_status" || !strings.Contains(res["error"].(string), "HTTP 503") ||
			!strings.Contains(res["error"].(string), "inventory offline") {
			t.Fatalf("result %v", res)
		}
		_, byKey := tool.snapshot()
		if byKey[id+":call_x"] != 1 {
			t.Fatalf("call_x executed %d times", byKey[id+":call_x"])
		}
	})
}
