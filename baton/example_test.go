package baton_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/baton-agents/baton/baton"
	"github.com/baton-agents/baton/core"
)

type weatherParams struct {
	City string `json:"city"`
}

type weather struct {
	City     string `json:"city"`
	Forecast string `json:"forecast"`
	Celsius  int    `json:"celsius"`
}

// weatherTool is a server tool backed by a typed Go function.
var weatherTool = baton.Tool{
	Name:        "ability/get_weather",
	Description: "Current weather for a city.",
	Parameters: map[string]any{"type": "object", "required": []any{"city"},
		"properties": map[string]any{"city": map[string]any{"type": "string"}}},
	Handler: baton.Typed(func(_ context.Context, p weatherParams, _ baton.ToolCall) (weather, error) {
		return weather{City: p.City, Forecast: "sunny", Celsius: 24}, nil
	}),
}

// script is a scripted model: each model turn replays the next turn.
func script(turns ...baton.ScriptedTurn) baton.ModelSpec {
	return baton.ModelSpec{Provider: baton.ProviderScripted, Model: "example", Turns: turns}
}

// A run of an agent with one Go tool: the model calls the tool, sees its
// result and answers. Start drives the whole loop in one call.
func ExampleRuntime_Start() {
	agent := baton.Agent{
		Name:   "planner",
		System: "You are a helpful planning assistant.",
		Tools:  []baton.Tool{weatherTool},
		Model: script(
			baton.ScriptedTurn{ToolCalls: []baton.ToolCallRequest{{ID: "call_1", Name: "ability/get_weather", Parameters: map[string]any{"city": "Lisbon"}}}},
			baton.ScriptedTurn{Content: "Sunny in Lisbon, 24°C."},
		),
	}
	rt := &baton.Runtime{}
	run, err := rt.Start(context.Background(), agent, baton.Request{Prompt: "Weather in Lisbon?", RunID: "run-1", SessionID: "sess-1"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	env := run.Envelope()
	fmt.Println(run.Status(), env.Completed, env.TurnCount)
	fmt.Println(env.FinalContent)
	res, _ := json.Marshal(env.ToolExecutionResults[0].Result)
	fmt.Println(string(res))
	for _, m := range env.Messages {
		if m.Role == "tool_call" {
			fmt.Printf("%s: %s %s\n", m.Role, m.ToolCallID(), m.ToolName())
			continue
		}
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	// Output:
	// completed true 2
	// Sunny in Lisbon, 24°C.
	// {"success":true,"tool_name":"ability/get_weather","result":{"celsius":24,"city":"Lisbon","forecast":"sunny"}}
	// user: Weather in Lisbon?
	// tool_call: call_1 ability/get_weather
	// tool_result: {"celsius":24,"city":"Lisbon","forecast":"sunny"}
	// assistant: Sunny in Lisbon, 24°C.
}

// A client tool is declared per run and answered by the caller: the run
// pauses with a pending request, and SubmitToolResult drives it on.
func ExampleRun_SubmitToolResult() {
	agent := baton.Agent{Name: "planner", Model: script(
		baton.ScriptedTurn{ToolCalls: []baton.ToolCallRequest{{ID: "call_1", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}}}},
		baton.ScriptedTurn{Content: "Monday is free."},
	)}
	calendar := map[string]any{"name": "client/get_calendar", "description": "Read the user's calendar.",
		"parameters": map[string]any{"type": "object", "required": []any{"day"}, "properties": map[string]any{"day": map[string]any{"type": "string"}}}}
	ctx := context.Background()
	rt := &baton.Runtime{}
	run, err := rt.Start(ctx, agent, baton.Request{Prompt: "Am I free on Monday?", ClientTools: []map[string]any{calendar}, RunID: "run-2", SessionID: "sess-2"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	reqs, _ := run.Pending()
	fmt.Println(run.Status(), reqs[0].ToolName, reqs[0].Parameters["day"])
	if err := run.SubmitToolResult(ctx, reqs[0].RequestID, map[string]any{"events": []any{}}); err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(run.Status(), run.Envelope().FinalContent)
	// Output:
	// runtime_tool_pending client/get_calendar monday
	// completed Monday is free.
}

// A tool whose action policy is "preview" pauses each call for an
// approval; Approve executes it, Reject gives the model a failed result.
func ExampleRun_Approve() {
	sent := 0
	send := baton.Tool{
		Name: "ability/send_email", Description: "Send an email.", ActionPolicy: "preview",
		Parameters: map[string]any{"type": "object", "required": []any{"to"}, "properties": map[string]any{"to": map[string]any{"type": "string"}}},
		Handler: func(_ context.Context, call baton.ToolCall) (any, error) {
			sent++
			return map[string]any{"sent": true, "idempotency_key": call.IdempotencyKey}, nil
		},
	}
	agent := baton.Agent{Name: "mailer", Tools: []baton.Tool{send}, Model: script(
		baton.ScriptedTurn{ToolCalls: []baton.ToolCallRequest{{ID: "call_1", Name: "ability/send_email", Parameters: map[string]any{"to": "ann@example.com"}}}},
		baton.ScriptedTurn{Content: "Sent."},
	)}
	ctx := context.Background()
	rt := &baton.Runtime{}
	run, err := rt.Start(ctx, agent, baton.Request{Prompt: "Mail Ann.", RunID: "run-3", SessionID: "sess-3"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	_, actions := run.Pending()
	fmt.Println(run.Status(), actions[0].ToolName, sent)
	if err := run.Approve(ctx, actions[0].ActionID, "looks right"); err != nil {
		fmt.Println("error:", err)
		return
	}
	res, _ := json.Marshal(run.Envelope().ToolExecutionResults[0].Result.Result)
	fmt.Println(run.Status(), sent, string(res))
	// Output:
	// approval_required ability/send_email 0
	// completed 1 {"idempotency_key":"run-3:call_1","sent":true}
}

// A sink sees each event as it is committed, its data typed: switch on
// the data's type rather than reading a map.
func ExampleRuntime_Start_events() {
	agent := baton.Agent{Name: "planner", Tools: []baton.Tool{weatherTool}, Model: script(
		baton.ScriptedTurn{ToolCalls: []baton.ToolCallRequest{{ID: "call_1", Name: "ability/get_weather", Parameters: map[string]any{"city": "Lisbon"}}}},
		baton.ScriptedTurn{Content: "Sunny in Lisbon, 24°C."},
	)}
	sink := core.EventSinkFunc(func(_ context.Context, ev baton.Event) error {
		switch d := ev.Data.(type) {
		case *core.ToolCallStartData:
			fmt.Println("calling", d.Name, d.Arguments)
		case *core.ToolResultData:
			fmt.Println("result of", d.ToolCallID, d.Success, d.Result)
		case *core.DoneData:
			fmt.Println("done:", d.Response)
		}
		return nil
	})
	rt := &baton.Runtime{Sink: sink}
	if _, err := rt.Start(context.Background(), agent, baton.Request{Prompt: "Weather in Lisbon?"}); err != nil {
		fmt.Println("error:", err)
	}
	// Output:
	// calling ability/get_weather {"city":"Lisbon"}
	// result of call_1 true {"celsius":24,"city":"Lisbon","forecast":"sunny"}
	// done: Sunny in Lisbon, 24°C.
}
