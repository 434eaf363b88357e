package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/toolsig"
)

func hookedAgent(mediator, completion string) string {
	return `{"agents":[{"slug":"h","model":{"provider":"scripted"},"allow_overrides":["model"],
	  "pre_tool_mediator":` + mediator + `,"completion_policy":` + completion + `}]}`
}

func hookEnv(k string) (string, bool) {
	if k == "HOOK_SECRET" {
		return "app-hook-secret", true
	}
	return "", false
}

// TestBuildRefusesMisconfiguredHooks: a hook that cannot be built stops
// the process at load, naming the agent and the field.
func TestBuildRefusesMisconfiguredHooks(t *testing.T) {
	ok := `{"type":"http","url":"http://127.0.0.1:9/h","secret_env":"HOOK_SECRET"}`
	for _, tc := range []struct{ name, mediator, completion, want string }{
		{"unset secret", `{"type":"http","url":"http://127.0.0.1:9/m","secret_env":"NOT_SET"}`, ok, "agent h: pre_tool_mediator: http executor: secret_env: "},
		{"no secret", ok, `{"type":"http","url":"http://127.0.0.1:9/c"}`, "agent h: completion_policy: http executor: a signing secret is required"},
		{"go type", `{"type":"go","handler":"echo"}`, ok, "agents[0].pre_tool_mediator.type: value must be one of 'http', 'lambda'"},
		{"bad on_error", `{"type":"lambda","function":"f","on_error":"ignore"}`, ok, "agents[0].pre_tool_mediator.on_error: value must be one of 'reject', 'proceed', 'continue'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(context.Background(), Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: hookedAgent(tc.mediator, tc.completion)},
				Providers: []string{ProviderScripted}, Env: hookEnv}, Deps{Log: quiet})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestAgentHooks: an app built as the API process (no tool execution)
// calls the agent's hooks: the mediator when the worker side mediates the
// model's client-tool call, and the completion policy when the API
// applies the client's result, which completes the run.
func TestAgentHooks(t *testing.T) {
	var mu sync.Mutex
	var seen []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if err := toolsig.Verify([]byte("app-hook-secret"), r.Header.Get(toolsig.HeaderTimestamp), r.Header.Get(toolsig.HeaderSignature), b, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var req map[string]any
		_ = json.Unmarshal(b, &req)
		mu.Lock()
		seen = append(seen, req)
		mu.Unlock()
		switch r.URL.Path {
		case "/mediate":
			io.WriteString(w, `{"action":"proceed"}`)
		case "/complete":
			io.WriteString(w, `{"complete":true,"context":{"by":"test"}}`)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	a, err := Build(ctx, Config{Stores: Stores{Memory: true}, Providers: []string{ProviderScripted}, Env: hookEnv,
		Agents: Agents{JSON: hookedAgent(`{"type":"http","url":"`+srv.URL+`/mediate","secret_env":"HOOK_SECRET"}`, `{"type":"http","url":"`+srv.URL+`/complete","secret_env":"HOOK_SECRET"}`)}},
		Deps{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	model := &core.ModelSpec{Provider: core.ProviderScripted, Turns: []core.ScriptedTurn{
		{ToolCalls: []core.ToolCallRequest{{ID: "call_1", Name: "client/ask", Parameters: map[string]any{"q": "ok?"}}}},
		{Content: "never reached"},
	}}
	snap, err := a.Runner.Start(ctx, "t", durable.StartRequest{Agent: "h", Messages: []core.Message{{Role: core.RoleUser, Content: "go"}},
		RequestTools: []any{map[string]any{"name": "client/ask", "description": "Ask the user.", "parameters": map[string]any{"type": "object"}}},
		Overrides:    agents.Overrides{Model: model}})
	if err != nil {
		t.Fatal(err)
	}
	runID := snap.State.RunID
	drainSteps(t, a)
	snap, err = a.Runner.Get(ctx, "t", runID)
	if err != nil {
		t.Fatal(err)
	}
	v, err := a.Runner.View(ctx, snap, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != core.StatusRuntimeToolPending || len(v.Pending.ToolRequests) != 1 {
		t.Fatalf("status %s, pending %+v", v.Status, v.Pending)
	}
	if _, err := a.Runner.Apply(ctx, "t", runID, core.ClientResult{RequestID: v.Pending.ToolRequests[0].RequestID, Success: true, Result: "yes"}); err != nil {
		t.Fatal(err)
	}
	drainSteps(t, a)
	snap, err = a.Runner.Get(ctx, "t", runID)
	if err != nil {
		t.Fatal(err)
	}
	if v, err = a.Runner.View(ctx, snap, 0); err != nil {
		t.Fatal(err)
	}
	if v.Status != core.StatusCompleted || v.Result.TurnCount != 1 {
		t.Fatalf("status %s after %d turns, events %+v", v.Status, v.Result.TurnCount, v.Result.Events)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0]["hook"] != "pre_tool_mediator" || seen[0]["agent"] != "h" || seen[0]["tool_call_id"] != "call_1" ||
		seen[1]["hook"] != "completion_policy" || seen[1]["run_id"] != runID {
		t.Fatalf("hook requests %+v", seen)
	}
	if r, _ := seen[1]["result"].(map[string]any); r["result"] != "yes" {
		t.Fatalf("completion request result %+v", seen[1]["result"])
	}
}

// drainSteps performs every queued step.
func drainSteps(t *testing.T, a *App) {
	t.Helper()
	ctx := context.Background()
	for {
		ds, err := a.Steps.Receive(ctx, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 0 {
			return
		}
		var step core.Step
		if err := json.Unmarshal(ds[0].Body, &step); err != nil {
			t.Fatal(err)
		}
		if err := a.Runner.HandleStep(ctx, step, durable.Attempt{ReceiveCount: ds[0].ReceiveCount, Owner: ds[0].ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
		if err := a.Steps.Delete(ctx, ds[0].ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBuildNamesTheCallbackOfAMissingSecret: an agent's callback whose
// secret cannot be read stops the process with an error naming the
// agent's callback and the field, not the executor it is built on.
func TestBuildNamesTheCallbackOfAMissingSecret(t *testing.T) {
	agents := `{"agents":[{"slug":"cb","model":{"provider":"scripted"},"callback":{"url":"https://hooks.example.com/x","secret_env":"BATON_TEST_CALLBACK_SECRET_UNSET"}}]}`
	_, err := Build(context.Background(), Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: agents}, Providers: []string{ProviderScripted}, Env: hookEnv}, Deps{Log: quiet})
	if err == nil || !strings.Contains(err.Error(), "agent cb: callback: secret_env") || strings.Contains(err.Error(), "http executor") {
		t.Fatalf("err = %v", err)
	}
}
