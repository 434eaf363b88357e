package hooks

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/guardrails"
)

// TestToolGuardrailHookInLoop: a tool-stage guardrail hook, put in a step
// machine's Guardrails.Tool the way the guardrails package builds them,
// denies one call and allows the next: the model sees "Tool denied by
// guardrail: <reason>", the loop goes on, and the run completes.
func TestToolGuardrailHookInLoop(t *testing.T) {
	srv := newHookServer(t, func(w http.ResponseWriter, _ *http.Request, body map[string]any) {
		if args, _ := body["arguments"].(map[string]any); args["id"] == "1" {
			writeJSON(w, `{"allow":false,"reason":"deletes need a ticket"}`)
			return
		}
		writeJSON(w, `{"allow":true}`)
	})
	rule, err := ParseRule(context.Background(), testRemote(nil), map[string]any{"type": "http", "url": srv.URL, "secret_env": "HOOK_SECRET"})
	if err != nil {
		t.Fatal(err)
	}
	m := core.NewMachine(nil)
	m.Guardrails.Tool = func(ctx context.Context, name string, args map[string]any) core.GuardrailResult {
		v, err := rule.Check(ctx, guardrails.Subject{Stage: guardrails.StageTool, RunID: "r-1", Agent: "a", Tool: name, Args: args})
		switch {
		case err != nil:
			return core.Deny(err.Error())
		case !v.Allow:
			return core.Deny(v.Reason)
		}
		return core.Allow()
	}
	var executed []any
	decl, err := core.NormalizeServerTool(map[string]any{"name": "crm/delete", "source": "crm", "description": "Delete a record.",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}})
	if err != nil {
		t.Fatal(err)
	}
	rn := &core.Runner{Machine: m, Model: core.ScriptedModel{}, Tools: core.ToolExecutorFunc(func(_ context.Context, c core.ToolCall) (any, error) {
		executed = append(executed, c.Parameters["id"])
		return map[string]any{"deleted": c.Parameters["id"]}, nil
	})}
	run, err := rn.Start(context.Background(), core.StartInput{RunID: "r-1", SessionID: "s-1", Messages: []core.Message{{Role: core.RoleUser, Content: "delete 1 and 2"}},
		Config: core.RunConfig{Agent: "a", Tools: []core.ToolDeclaration{decl}, Model: core.ModelSpec{Provider: core.ProviderScripted, Turns: []core.ScriptedTurn{
			{ToolCalls: []core.ToolCallRequest{{ID: "call_1", Name: "crm/delete", Parameters: map[string]any{"id": "1"}}}},
			{ToolCalls: []core.ToolCallRequest{{ID: "call_2", Name: "crm/delete", Parameters: map[string]any{"id": "2"}}}},
			{Content: "Deleted 2; 1 needs a ticket."},
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	env := run.Envelope()
	if env.Status != core.StatusCompleted || env.FinalContent != "Deleted 2; 1 needs a ticket." || len(executed) != 1 || executed[0] != "2" {
		t.Fatalf("status %s final %q executed %v", env.Status, env.FinalContent, executed)
	}
	var denied bool
	for _, msg := range env.Messages {
		if msg.Role == core.RoleToolResult && msg.ToolCallID() == "call_1" && strings.Contains(msg.Content, "Tool denied by guardrail: deletes need a ticket") {
			denied = true
		}
	}
	if !denied {
		t.Fatalf("no denial the model can see in %+v", env.Messages)
	}
	if reqs := srv.requests(); len(reqs) != 2 || reqs[0].body["tool"] != "crm/delete" {
		t.Fatalf("guardrail requests %+v", reqs)
	}
}
