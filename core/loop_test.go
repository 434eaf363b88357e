package core

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func num(s string) json.Number { return json.Number(s) }

// TestScenarios covers the step machine's agent loop: every scenario
// is checked against its golden envelope, and run both in process and one
// serialized step at a time with identical envelopes.
func TestScenarios(t *testing.T) {
	search := serverTool("ability/search", nil)
	repeat := serverTool("ability/ping", map[string]any{"runtime": map[string]any{"duplicate_policy": "repeatable"}})
	email := serverTool("ability/send_email", map[string]any{
		"action_policy": "preview",
		"parameters": map[string]any{"type": "object", "required": []any{"to"},
			"properties": map[string]any{"to": map[string]any{"type": "string"}, "body": map[string]any{"type": "string"}}},
	})
	deleter := serverTool("ability/delete_all", map[string]any{"action_policy": "forbidden"})
	strict := serverTool("ability/strict", map[string]any{
		"parameters": map[string]any{"type": "object", "required": []any{"count"},
			"properties": map[string]any{"count": map[string]any{"type": "integer", "minimum": 1}}},
	})
	cited := serverTool("ability/retrieve", map[string]any{"runtime": map[string]any{"completion_signal": "progress", "environment": "control_plane", "api_key": "sk-live-123"}})
	base := func(turns ...ScriptedTurn) RunConfig {
		return RunConfig{Agent: "demo", Model: scripted(turns...), System: "You are a helpful assistant.", Tools: []ToolDeclaration{search}}
	}
	handlers := map[string]func(ToolCall) (any, error){
		"ability/search":     echo,
		"ability/ping":       echo,
		"ability/send_email": func(c ToolCall) (any, error) { return map[string]any{"sent": true, "to": c.Parameters["to"]}, nil },
		"ability/strict":     echo,
		"ability/retrieve": func(ToolCall) (any, error) {
			return map[string]any{"success": true, "result": map[string]any{"docs": 2},
				"runtime": map[string]any{"environment": "runtime_local", "token": "x"},
				"metadata": map[string]any{"trace": "t1", "citations": []any{
					map[string]any{"source": "kb", "source_url": "https://kb.example/1", "score": num("0.9"), "excerpt": "First", "access_status": "allowed", "cookie": "c", "owner": "team-a"},
					map[string]any{"source": 7, "score": "high", "access_status": "bogus", "item_id": "i2"},
					"not-a-citation",
				}}}, nil
		},
	}

	scenarios := []scenario{
		{name: "plain_answer", cfg: base(turn("Here is your plan.")), wantStatus: StatusCompleted},
		{name: "server_tool_call", handlers: handlers, wantStatus: StatusCompleted,
			cfg: base(turn("Let me search.", call("call_1", "ability/search", map[string]any{"q": "calendar"})), turn("Done: found it."))},
		{name: "client_tool_pause", requestTools: []any{clientTool("client/get_calendar")}, wantStatus: StatusRuntimeToolPending,
			cfg: base(turn("", call("call_1", "client/get_calendar", map[string]any{"day": "monday"})), turn("Monday is free."))},
		{name: "client_tool_resume", requestTools: []any{clientTool("client/get_calendar")}, wantStatus: StatusCompleted,
			resumes: []func(RunState, *FixedClock) Input{submitFirst(true, map[string]any{"events": []any{}}, "")},
			cfg:     base(turn("", call("call_1", "client/get_calendar", map[string]any{"day": "monday"})), turn("Monday is free."))},
		{name: "client_tool_reported_failure", requestTools: []any{clientTool("client/get_calendar")}, wantStatus: StatusCompleted,
			resumes: []func(RunState, *FixedClock) Input{submitFirst(false, nil, "calendar permission denied")},
			cfg:     base(turn("", call("call_1", "client/get_calendar", map[string]any{"day": "monday"})), turn("I could not read your calendar."))},
		{name: "client_tool_expiry", requestTools: []any{clientTool("client/get_calendar")}, wantStatus: StatusCompleted,
			resumes: []func(RunState, *FixedClock) Input{expireAfter(25 * time.Hour)},
			cfg:     base(turn("", call("call_1", "client/get_calendar", map[string]any{"day": "monday"})), turn("The calendar did not answer."))},
		{name: "approval_pause", handlers: handlers, wantStatus: StatusApprovalRequired,
			cfg: withTools(base(turn("", call("call_1", "ability/send_email", map[string]any{"to": "ann@example.com", "body": "hi", "api_token": "secret-1"})), turn("Sent.")), email)},
		{name: "approval_accept", handlers: handlers, wantStatus: StatusCompleted,
			resumes: []func(RunState, *FixedClock) Input{decideFirst("accept", "")},
			cfg:     withTools(base(turn("", call("call_1", "ability/send_email", map[string]any{"to": "ann@example.com", "body": "hi"})), turn("Sent.")), email)},
		{name: "approval_reject", handlers: handlers, wantStatus: StatusCompleted,
			resumes: []func(RunState, *FixedClock) Input{decideFirst("reject", "not to Ann")},
			cfg:     withTools(base(turn("", call("call_1", "ability/send_email", map[string]any{"to": "ann@example.com"})), turn("OK, I did not send it.")), email)},
		{name: "approval_expiry", handlers: handlers, wantStatus: StatusCompleted,
			resumes: []func(RunState, *FixedClock) Input{expireAfter(2 * time.Hour)},
			cfg: func() RunConfig {
				c := withTools(base(turn("", call("call_1", "ability/send_email", map[string]any{"to": "ann@example.com"})), turn("Nobody approved.")), email)
				c.PendingTTL = Duration(time.Hour)
				return c
			}()},
		{name: "forbidden_tool", handlers: handlers, wantStatus: StatusCompleted,
			cfg: withTools(base(turn("", call("call_1", "ability/delete_all", nil)), turn("That is not allowed.")), deleter)},
		{name: "budget_tool_calls", handlers: handlers, wantStatus: StatusBudgetExceeded,
			cfg: withBudgets(base(
				turn("", call("call_1", "ability/search", map[string]any{"q": "a"}), call("call_2", "ability/search", map[string]any{"q": "b"}), call("call_3", "ability/search", map[string]any{"q": "c"})),
				turn("unreachable")), map[string]int{"tool_calls": 2})},
		{name: "budget_tool_calls_per_tool", handlers: handlers, wantStatus: StatusBudgetExceeded,
			cfg: withBudgets(withTools(base(
				turn("", call("call_1", "ability/ping", map[string]any{"q": "a"})),
				turn("", call("call_2", "ability/search", map[string]any{"q": "b"})),
				turn("", call("call_3", "ability/ping", map[string]any{"q": "a"})),
				turn("unreachable")), repeat), map[string]int{"tool_calls_ability/ping": 2})},
		{name: "budget_turns", handlers: handlers, wantStatus: StatusBudgetExceeded,
			cfg: withBudgets(base(
				turn("", call("call_1", "ability/search", map[string]any{"q": "a"})),
				turn("", call("call_2", "ability/search", map[string]any{"q": "b"})),
				turn("unreachable")), map[string]int{"turns": 2})},
		{name: "budget_total_tokens", handlers: handlers, wantStatus: StatusBudgetExceeded,
			cfg: withBudgets(base(
				turn("", call("call_1", "ability/search", map[string]any{"q": "a"})),
				turn("", call("call_2", "ability/search", map[string]any{"q": "b"})),
				turn("unreachable")), map[string]int{"total_tokens": 30})},
		{name: "max_turns_reached", handlers: handlers, wantStatus: StatusMaxTurnsReached,
			cfg: func() RunConfig {
				c := base(turn("", call("call_1", "ability/search", map[string]any{"q": "a"})), turn("", call("call_2", "ability/search", map[string]any{"q": "b"})), turn("unreachable"))
				c.MaxTurns = 2
				return c
			}()},
		{name: "duplicate_prevented", handlers: handlers, wantStatus: StatusCompleted,
			cfg: base(
				turn("", call("call_1", "ability/search", map[string]any{"q": "same", "page": num("1")})),
				turn("", call("call_2", "ability/search", map[string]any{"page": num("1"), "q": "same"})),
				turn("Using the first result."))},
		{name: "duplicate_repeatable", handlers: handlers, wantStatus: StatusCompleted,
			cfg: withTools(base(
				turn("", call("call_1", "ability/ping", map[string]any{"q": "x"})),
				turn("", call("call_2", "ability/ping", map[string]any{"q": "x"})),
				turn("Pinged twice.")), repeat)},
		{name: "declaration_rejected", handlers: handlers, wantStatus: StatusCompleted,
			requestTools: []any{
				clientTool("client/get_calendar"),
				map[string]any{"name": "openclawp__get-recent-posts", "description": "no namespace"},
				map[string]any{"name": "client/BadName", "description": "upper case"},
				map[string]any{"name": "client/scoped", "description": "wrong scope", "scope": "session"},
			},
			cfg: base(turn("Nothing to do."))},
		{name: "mediation_disabled", wantStatus: StatusCompleted,
			requestTools: []any{map[string]any{"name": "client/x", "executor": "host", "description": "bad executor"}},
			cfg:          RunConfig{Model: scripted(turn("", call("call_1", "client/x", nil)), turn("No tools ran."))}},
		{name: "tool_not_found", handlers: handlers, wantStatus: StatusCompleted,
			cfg: base(turn("", call("call_1", "ability/missing", map[string]any{"q": "a"})), turn("That tool does not exist."))},
		{name: "missing_required_parameters", handlers: handlers, wantStatus: StatusCompleted,
			cfg: withTools(base(turn("", call("call_1", "ability/strict", map[string]any{"other": "x"})), turn("I need a count.")), strict)},
		{name: "invalid_parameters", handlers: handlers, wantStatus: StatusCompleted,
			cfg: withTools(base(turn("", call("call_1", "ability/strict", map[string]any{"count": "three"})), turn("Count must be a number.")), strict)},
		{name: "executor_panic", wantStatus: StatusCompleted,
			handlers: map[string]func(ToolCall) (any, error){"ability/search": func(ToolCall) (any, error) { panic("index out of range") }},
			cfg:      base(turn("", call("call_1", "ability/search", map[string]any{"q": "a"})), turn("The tool crashed."))},
		{name: "executor_error", wantStatus: StatusCompleted,
			handlers: map[string]func(ToolCall) (any, error){"ability/search": func(ToolCall) (any, error) { return nil, errBoom }},
			cfg:      base(turn("", call("call_1", "ability/search", map[string]any{"q": "a"})), turn("The tool failed."))},
		{name: "executor_reported_failure", wantStatus: StatusCompleted,
			handlers: map[string]func(ToolCall) (any, error){"ability/search": func(ToolCall) (any, error) {
				return map[string]any{"success": false, "error": "quota exhausted", "error_type": "quota"}, nil
			}},
			cfg: base(turn("", call("call_1", "ability/search", map[string]any{"q": "a"})), turn("Quota is gone."))},
		{name: "runtime_metadata_and_citations", handlers: handlers, wantStatus: StatusCompleted,
			cfg: withTools(base(turn("", call("call_1", "ability/retrieve", map[string]any{"q": "docs"})), turn("Found two docs.")), cited)},
		{name: "result_truncated", wantStatus: StatusCompleted,
			handlers: map[string]func(ToolCall) (any, error){"ability/search": func(ToolCall) (any, error) {
				return map[string]any{"blob": strings.Repeat("é", 200)}, nil
			}},
			cfg: func() RunConfig {
				c := base(turn("", call("call_1", "ability/search", map[string]any{"q": "a"})), turn("Truncated."))
				c.ToolResultMaxBytes = 64
				return c
			}()},
		{name: "mediator_reject", handlers: handlers, wantStatus: StatusCompleted,
			hooks: func(m *Machine) {
				m.PreToolMediator = func(_ context.Context, mc MediationContext) MediatorDecision {
					return MediatorDecision{Action: MediatorReject, Error: "Searches are paused.", Metadata: map[string]any{"error_type": "policy_paused"}}
				}
			},
			cfg: base(turn("", call("call_1", "ability/search", map[string]any{"q": "a"})), turn("Searches are paused."))},
		{name: "mediator_replace_result_complete", handlers: handlers, wantStatus: StatusCompleted,
			hooks: func(m *Machine) {
				m.PreToolMediator = func(_ context.Context, mc MediationContext) MediatorDecision {
					if mc.ToolCallID == "call_1" {
						return MediatorDecision{Action: MediatorReplaceResult, Result: map[string]any{"success": true, "result": map[string]any{"summary": "supplied by host policy"}}, Complete: true}
					}
					return MediatorDecision{Action: MediatorProceed}
				}
			},
			cfg: base(turn("", call("call_1", "ability/search", map[string]any{"q": "a"}), call("call_2", "ability/search", map[string]any{"q": "b"})), turn("unreachable"))},
		{name: "completion_policy_stop", handlers: handlers, wantStatus: StatusCompleted,
			hooks: func(m *Machine) {
				m.CompletionPolicy = func(_ context.Context, cc CompletionContext) CompletionDecision {
					return CompletionDecision{Complete: cc.Result.Success, Context: map[string]any{"rule": "first_success"}}
				}
			},
			cfg: base(turn("", call("call_1", "ability/search", map[string]any{"q": "a"})), turn("unreachable"))},
		{name: "completion_policy_continue", handlers: handlers, wantStatus: StatusCompleted,
			hooks: func(m *Machine) {
				m.CompletionPolicy = func(_ context.Context, cc CompletionContext) CompletionDecision {
					return CompletionDecision{Message: "Now publish the summary."}
				}
			},
			cfg: base(turn("", call("call_1", "ability/search", map[string]any{"q": "a"}), call("call_2", "ability/search", map[string]any{"q": "b"})), turn("Published."))},
		{name: "usage_and_request_metadata", wantStatus: StatusCompleted, handlers: handlers,
			cfg: base(
				ScriptedTurn{ToolCalls: []ToolCallRequest{call("call_1", "ability/search", map[string]any{"q": "a"})},
					Usage:           map[string]any{"prompt_tokens": num("100"), "completion_tokens": num("20"), "cache_read_input_tokens": num("64"), "service_tier": "standard"},
					RequestMetadata: map[string]any{"provider": "scripted", "request_id": "req-1"}},
				ScriptedTurn{Content: "Done.",
					Usage:           map[string]any{"prompt_tokens": num("130"), "completion_tokens": num("7"), "total_tokens": num("140"), "cache_read_input_tokens": num("64"), "reasoning_tokens": num("3"), "service_tier": "priority"},
					RequestMetadata: map[string]any{"provider": "scripted", "request_id": "req-2"}})},
		{name: "model_script_exhausted", handlers: handlers, wantStatus: StatusFailed,
			cfg: base(turn("", call("call_1", "ability/search", map[string]any{"q": "a"})))},
		{name: "sensitive_parameters_redacted", handlers: handlers, wantStatus: StatusCompleted,
			cfg: base(turn("", call("call_1", "ability/search", map[string]any{"q": "a", "password": "hunter2", "nested": map[string]any{"Authorization": "Bearer x"}})), turn("ok"))},
		{name: "legacy_messages_normalized", handlers: handlers, wantStatus: StatusCompleted,
			messages: mustNormalize(t, `[
				{"role":"developer","content":"Be brief."},
				{"role":"user","content":[{"type":"text","text":"What did "},{"type":"text","text":"I ask?"}]},
				{"role":"assistant","content":"Checking.","tool_calls":[{"id":"old_1","type":"function","function":{"name":"ability/search","arguments":"{\"q\":\"history\"}"}}]},
				{"role":"tool","tool_call_id":"old_1","content":"{\"found\":true}"},
				{"role":"user","content":"Continue."}
			]`),
			cfg: base(turn("You asked about history."))},
	}
	runScenarios(t, scenarios)
}

func withTools(c RunConfig, tools ...ToolDeclaration) RunConfig {
	c.Tools = append(append([]ToolDeclaration(nil), c.Tools...), tools...)
	return c
}

func withBudgets(c RunConfig, b map[string]int) RunConfig {
	c.Budgets = b
	return c
}

func mustNormalize(t *testing.T, s string) []Message {
	t.Helper()
	msgs, err := NormalizeMessagesJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}
