//go:build e2e

package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startEverything runs the reference MCP server
// @modelcontextprotocol/server-everything in its Streamable HTTP mode on
// a free port and returns its endpoint on 127.0.0.1. It runs when
// BATON_MCP_EVERYTHING names the package's dist/index.js
// (scripts/emulators.sh run sets it and BATON_NODE); once it is set, a
// missing file or node fails the test.
func startEverything(t *testing.T) string {
	t.Helper()
	main := os.Getenv("BATON_MCP_EVERYTHING")
	if main == "" {
		t.Skip("BATON_MCP_EVERYTHING does not name @modelcontextprotocol/server-everything's dist/index.js (scripts/emulators.sh run sets it)")
	}
	node := os.Getenv("BATON_NODE")
	if node == "" {
		node = "node"
	}
	if _, err := os.Stat(main); err != nil {
		t.Fatalf("BATON_MCP_EVERYTHING: %v", err)
	}
	if _, err := exec.LookPath(node); err != nil {
		t.Fatalf("node (BATON_NODE=%q): %v", node, err)
	}
	port := freePort(t)
	cmd := exec.Command(node, main, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not listen on %s; log:\n%s", addr, logs.String())
		}
	}
	return "http://" + addr + "/mcp"
}

// freePort is a port nothing listens on (yet).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// mcpAgent is an agents-file agent with one MCP server.
func mcpAgent(slug string, server map[string]any, tools ...any) map[string]any {
	a := map[string]any{"slug": slug, "model": map[string]any{"provider": "scripted"}, "max_turns": 8, "allow_overrides": []any{"model"},
		"mcp_servers": []any{server}}
	if len(tools) > 0 {
		a["tools"] = tools
	}
	return a
}

// toolResults are a run's tool results by tool call id.
func toolResults(v map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, r := range result(v)["tool_execution_results"].([]any) {
		rm := r.(map[string]any)
		out[rm["tool_call_id"].(string)] = rm["result"].(map[string]any)
	}
	return out
}

// eventTypes are the types of a run's events.
func eventTypes(t *testing.T, d *dev, id string) map[string]map[string]any {
	t.Helper()
	r := d.call(t, "GET", "/v1/runs/"+id+"/events?after=0&limit=200", tokAcme, "")
	if r.status != 200 {
		t.Fatalf("events: %d %v", r.status, r.body)
	}
	out := map[string]map[string]any{}
	for _, e := range r.body["events"].([]any) {
		em := e.(map[string]any)
		data, _ := em["data"].(map[string]any)
		out[em["type"].(string)] = data
	}
	return out
}

// TestMCPEverything runs agents whose tools come from the reference MCP
// server through baton dev: baton mcp ls lists them; a scripted run
// calls echo and get-sum (names with their hyphens) and finishes with
// their results; invalid arguments are refused by schema validation; a
// preview tool pauses for approval and runs after accept; a server down
// at cold start leaves the worker serving other tools.
func TestMCPEverything(t *testing.T) {
	url := startEverything(t)
	down := fmt.Sprintf("http://127.0.0.1:%d/mcp", freePort(t))
	everything := func(overrides map[string]any) map[string]any {
		s := map[string]any{"name": "everything", "url": url, "tools": []any{"echo", "get-sum"}, "timeout": "20s"}
		if overrides != nil {
			s["tool_overrides"] = overrides
		}
		return s
	}
	file := writeAgentsFile(t, map[string]any{"agents": []any{
		mcpAgent("e2e-mcp", everything(nil)),
		mcpAgent("e2e-mcp-preview", everything(map[string]any{"echo": map[string]any{"action_policy": "preview"}})),
		mcpAgent("e2e-mcp-down", map[string]any{"name": "gone", "url": down},
			map[string]any{"name": "util/echo", "source": "util", "description": "Echo the parameters.", "executor": map[string]any{"type": "go", "handler": "echo"}}),
	}})

	t.Run("baton mcp ls lists the agent's tools", func(t *testing.T) {
		out, err := exec.Command(binary, "mcp", "ls", "--agents", file, "--agent", "e2e-mcp").Output()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		var ls struct {
			Tools []struct {
				Name, Description string
				Parameters        map[string]any
			}
		}
		if err := json.Unmarshal(out, &ls); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		names := map[string]map[string]any{}
		for _, tl := range ls.Tools {
			if tl.Description == "" {
				t.Errorf("%s has no description", tl.Name)
			}
			names[tl.Name] = tl.Parameters
		}
		if len(names) != 2 || names["mcp/everything/echo"] == nil || names["mcp/everything/get-sum"] == nil {
			t.Fatalf("tools %s", out)
		}
		if props, _ := names["mcp/everything/get-sum"]["properties"].(map[string]any); props["a"] == nil || props["b"] == nil {
			t.Fatalf("get-sum schema %v", names["mcp/everything/get-sum"])
		}
		bad, err := exec.Command(binary, "mcp", "ls", "--agents", file, "--agent", "e2e-mcp-down").CombinedOutput()
		if err == nil || !strings.Contains(string(bad), "mcp/gone") {
			t.Fatalf("a server that is down: %v %s", err, bad)
		}
	})

	d := startDev(t, withAgentsFile(devArgs(t), file))

	t.Run("echo and get-sum, results in the transcript", func(t *testing.T) {
		id := start(t, d, `{"agent":"e2e-mcp","messages":[{"role":"user","content":"echo and add"}],"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"c_echo","name":"mcp/everything/echo","parameters":{"message":"hello baton"}}]},
			{"tool_calls":[{"id":"c_sum","name":"mcp/everything/get-sum","parameters":{"a":2,"b":3}}]},
			{"tool_calls":[{"id":"c_bad","name":"mcp/everything/get-sum","parameters":{"a":"two","b":3}}]},
			{"content":"done"}]}}`)
		v := d.waitStatus(t, id)
		if v["status"] != "completed" || result(v)["final_content"] != "done" {
			t.Fatalf("%v\nlogs:\n%s", v, d.out.String())
		}
		res := toolResults(v)
		if r := res["c_echo"]; r["success"] != true || !strings.Contains(fmt.Sprint(r["result"]), "hello baton") {
			t.Errorf("echo: %v", r)
		}
		if r := res["c_sum"]; r["success"] != true || !strings.Contains(fmt.Sprint(r["result"]), "5") {
			t.Errorf("get-sum: %v", r)
		}
		if r := res["c_bad"]; r["success"] != false || r["error_type"] != "invalid_parameters" {
			t.Errorf("invalid arguments: %v", r)
		}
		var echoed, summed bool
		for _, m := range result(v)["messages"].([]any) {
			mm := m.(map[string]any)
			if mm["role"] == "tool_result" {
				c := fmt.Sprint(mm["content"])
				echoed = echoed || strings.Contains(c, "hello baton")
				summed = summed || strings.Contains(c, "5")
			}
		}
		if !echoed || !summed {
			t.Errorf("the transcript lacks the tools' results: %v", result(v)["messages"])
		}
		ev := eventTypes(t, d, id)
		if disc := ev["tools_discovered"]; disc == nil || len(disc["visible"].([]any)) != 2 {
			t.Errorf("tools_discovered %v", disc)
		}
	})

	t.Run("a preview tool pauses for approval and runs after accept", func(t *testing.T) {
		id := start(t, d, `{"agent":"e2e-mcp-preview","messages":[{"role":"user","content":"echo"}],"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"c1","name":"mcp/everything/echo","parameters":{"message":"approved echo"}}]},{"content":"ok"}]}}`)
		v := d.waitStatus(t, id)
		if v["status"] != "approval_required" {
			t.Fatalf("%v", v)
		}
		act := pending(v, "actions", "action_id")
		if r := d.call(t, "POST", "/v1/runs/"+id+"/approvals/"+act, tokAcme, `{"decision":"accept"}`); r.status != 202 {
			t.Fatalf("decide: %d %v", r.status, r.body)
		}
		v = d.waitStatus(t, id)
		if r := toolResults(v)["c1"]; v["status"] != "completed" || r["success"] != true || !strings.Contains(fmt.Sprint(r["result"]), "approved echo") {
			t.Fatalf("%v", v)
		}
	})

	t.Run("a server down at cold start leaves the other tools working", func(t *testing.T) {
		id := start(t, d, `{"agent":"e2e-mcp-down","messages":[{"role":"user","content":"echo"}],"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"c1","name":"util/echo","parameters":{"x":1}}]},
			{"tool_calls":[{"id":"c2","name":"mcp/gone/anything","parameters":{}}]},{"content":"ok"}]}}`)
		v := d.waitStatus(t, id)
		res := toolResults(v)
		if v["status"] != "completed" || res["c1"]["success"] != true || res["c2"]["error_type"] != "tool_not_found" {
			t.Fatalf("%v", v)
		}
		if u := eventTypes(t, d, id)["tool_source_unavailable"]; u == nil || u["source"] != "mcp/gone" || u["error"] == "" {
			t.Fatalf("tool_source_unavailable %v", u)
		}
	})
}

// tenantServer is an MCP server of the test (the SDK's streamable
// handler) that records, per call, the Authorization header and the
// idempotency key the call carried.
type tenantServer struct {
	mu    sync.Mutex
	calls map[string]string // idempotency key → Authorization
}

func newTenantServer(t *testing.T) (*tenantServer, string) {
	ts := &tenantServer{calls: map[string]string{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "crm", Version: "1"}, nil)
	type in struct {
		Customer string `json:"customer" jsonschema:"the customer id"`
	}
	type out struct {
		Customer string `json:"customer"`
		Plan     string `json:"plan"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "lookup_customer", Description: "Look up a customer."}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, out, error) {
		key, _ := req.Params.Meta["baton/idempotency_key"].(string)
		ts.mu.Lock()
		ts.calls[key] = req.Extra.Header.Get("Authorization")
		ts.mu.Unlock()
		return nil, out{Customer: a.Customer, Plan: "gold"}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return ts, hs.URL
}

// TestMCPTenantCredentials: two tenants whose {tenant} secrets differ
// each reach the server with their own credential, never the other's.
func TestMCPTenantCredentials(t *testing.T) {
	ts, url := newTenantServer(t)
	acmeTok, globexTok := "crm-acme-"+randomSuffix(), "crm-globex-"+randomSuffix()
	t.Setenv("BATON_E2E_CRM_acme", acmeTok) // baton dev inherits the environment
	t.Setenv("BATON_E2E_CRM_globex", globexTok)
	file := writeAgentsFile(t, map[string]any{"agents": []any{mcpAgent("e2e-mcp-crm", map[string]any{
		"name": "crm", "url": url,
		"headers": map[string]any{"Authorization": map[string]any{"secret_env": "BATON_E2E_CRM_{tenant}", "prefix": "Bearer "}},
	})}})
	d := startDev(t, withAgentsFile(devArgs(t), file))
	runAs := func(tok, customer string) (string, map[string]any) {
		r := d.call(t, "POST", "/v1/runs", tok, `{"agent":"e2e-mcp-crm","messages":[{"role":"user","content":"look up"}],"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"c1","name":"mcp/crm/lookup_customer","parameters":{"customer":"`+customer+`"}}]},
			{"tool_calls":[{"id":"c2","name":"mcp/crm/lookup_customer","parameters":{"customer":7}}]},{"content":"ok"}]}}`)
		if r.status != 202 {
			t.Fatalf("start: %d %v", r.status, r.body)
		}
		id := r.body["run_id"].(string)
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
			g := d.call(t, "GET", "/v1/runs/"+id+"?wait=5", tok, "")
			if s := g.body["status"]; s != "queued" && s != "running" {
				return id, g.body
			}
		}
		t.Fatalf("run %s did not settle", id)
		return "", nil
	}
	acmeRun, av := runAs(tokAcme, "c-acme")
	globexRun, gv := runAs(tokGlobex, "c-globex")
	for _, v := range []map[string]any{av, gv} {
		res := toolResults(v)
		if v["status"] != "completed" || res["c1"]["success"] != true || fmt.Sprint(res["c1"]["result"].(map[string]any)["plan"]) != "gold" {
			t.Fatalf("%v\nlogs:\n%s", v, d.out.String())
		}
		if res["c2"]["error_type"] != "invalid_parameters" {
			t.Fatalf("invalid arguments reached the server: %v", res["c2"])
		}
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.calls) != 2 {
		t.Fatalf("the server saw %d calls, want 2 (the invalid ones never reach it): %v", len(ts.calls), ts.calls)
	}
	if got := ts.calls[acmeRun+":c1"]; got != "Bearer "+acmeTok {
		t.Errorf("acme's call carried %q", got)
	}
	if got := ts.calls[globexRun+":c1"]; got != "Bearer "+globexTok {
		t.Errorf("globex's call carried %q", got)
	}
	if strings.Contains(d.out.String(), acmeTok) || strings.Contains(d.out.String(), globexTok) {
		t.Error("a credential appears in baton dev's logs")
	}
}
