package local

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/baton-agents/baton/core"
)

// demoScript is the scripted model of the demo: a server tool call, a
// client tool call, an action that needs approval, then a final answer.
const demoScript = `[
  {"content": "Let me check the weather first.",
   "tool_calls": [{"id": "call_weather", "name": "ability/get_weather", "parameters": {"city": "Lisbon"}}],
   "usage": {"prompt_tokens": 120, "completion_tokens": 18}},
  {"tool_calls": [{"id": "call_calendar", "name": "client/get_calendar", "parameters": {"day": "monday"}}],
   "usage": {"prompt_tokens": 160, "completion_tokens": 12}},
  {"content": "Monday is free and sunny. I will email Ann.",
   "tool_calls": [{"id": "call_email", "name": "ability/send_email", "parameters": {"to": "ann@example.com", "body": "Picnic on Monday?"}}],
   "usage": {"prompt_tokens": 210, "completion_tokens": 25}},
  {"content": "Your week is planned: picnic with Ann on Monday (sunny, 24°C).",
   "usage": {"prompt_tokens": 260, "completion_tokens": 16}}
]`

func demoTools() ([]core.ToolDeclaration, error) {
	raw := []map[string]any{
		{"name": "ability/get_weather", "source": "go", "description": "Current weather for a city.",
			"parameters": map[string]any{"type": "object", "required": []any{"city"}, "properties": map[string]any{"city": map[string]any{"type": "string"}}}},
		{"name": "ability/send_email", "source": "go", "description": "Send an email.", "action_policy": "preview",
			"parameters": map[string]any{"type": "object", "required": []any{"to"}, "properties": map[string]any{"to": map[string]any{"type": "string"}, "body": map[string]any{"type": "string"}}}},
	}
	out := make([]core.ToolDeclaration, 0, len(raw))
	for _, r := range raw {
		d, err := core.NormalizeServerTool(r)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// Demo runs the scripted demo agent in process: a server tool call, a
// client-tool pause and resume, an approval, and the final result
// envelope, which it writes to stdout as indented JSON; unless quiet, it
// narrates the run first.
func Demo(ctx context.Context, stdout io.Writer, quiet bool) error {
	say := func(format string, a ...any) {
		if !quiet {
			fmt.Fprintf(stdout, format+"\n", a...)
		}
	}
	var turns []core.ScriptedTurn
	if err := json.Unmarshal([]byte(demoScript), &turns); err != nil {
		return fmt.Errorf("demo script: %w", err)
	}
	tools, err := demoTools()
	if err != nil {
		return err
	}
	executor := core.ToolExecutorFunc(func(_ context.Context, c core.ToolCall) (any, error) {
		switch c.ToolName {
		case "ability/get_weather":
			return map[string]any{"city": c.Parameters["city"], "forecast": "sunny", "celsius": 24}, nil
		case "ability/send_email":
			return map[string]any{"sent": true, "message_id": "msg-" + c.IdempotencyKey}, nil
		}
		return nil, fmt.Errorf("no handler for %s", c.ToolName)
	})
	rn := &core.Runner{
		Machine: core.NewMachine(core.SystemClock{}),
		Model:   core.ModelRouter{core.ProviderScripted: core.ScriptedModel{}},
		Tools:   executor,
		Sink: core.EventSinkFunc(func(_ context.Context, ev core.Event) error {
			say("  event %-30s turn %d", ev.Type, ev.Turn)
			return nil
		}),
	}
	say("Starting a run of the scripted demo agent.")
	run, err := rn.Start(ctx, core.StartInput{
		RunID: "r-demo", SessionID: "s-demo",
		Config: core.RunConfig{Agent: "demo", Model: core.ModelSpec{Provider: core.ProviderScripted, Model: "demo-script", Turns: turns},
			System: "You are a helpful planning assistant.", Tools: tools, Budgets: map[string]int{"tool_calls": 20}},
		RequestTools: []any{map[string]any{"name": "client/get_calendar", "description": "Read the user's calendar in the browser.",
			"parameters": map[string]any{"type": "object", "required": []any{"day"}, "properties": map[string]any{"day": map[string]any{"type": "string"}}}}},
		Messages: []core.Message{{Role: core.RoleUser, Content: "Plan my week."}},
	})
	if err != nil {
		return err
	}
	for !core.IsTerminal(run.State.Status) {
		reqs, acts := run.State.Pending()
		var in core.Input
		switch {
		case len(reqs) > 0:
			say("\nThe run paused (%s): the client must run %s %s.", run.State.Status, reqs[0].ToolName, compact(reqs[0].Parameters))
			say("Submitting the client's result for request %s.", reqs[0].RequestID)
			in = core.ClientResult{RequestID: reqs[0].RequestID, Success: true, Result: map[string]any{"events": []any{}, "free": true}}
		case len(acts) > 0:
			say("\nThe run paused (%s): %s", run.State.Status, acts[0].Summary)
			say("Accepting action %s.", acts[0].ActionID)
			in = core.ApprovalDecision{ActionID: acts[0].ActionID, Decision: "accept"}
		default:
			return fmt.Errorf("run stopped in status %s with nothing pending", run.State.Status)
		}
		if err := rn.Resume(ctx, run, in); err != nil {
			return err
		}
	}
	say("\nThe run finished with status %s. Result envelope:\n", run.State.Status)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(run.Envelope())
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return strings.TrimSpace(string(b))
}
