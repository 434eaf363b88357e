package providertest

import (
	"encoding/json"

	"github.com/baton-agents/baton/core"
)

// The model requests every provider's tests send, so the golden requests
// of the providers show the same conversations in each wire format.

// Tools are the declarations of the tool scenarios: a client tool and a
// server tool, both with '/' in their names.
func Tools() []core.ToolDeclaration {
	return []core.ToolDeclaration{
		{Name: "client/get_calendar", Source: "client", Executor: core.ExecutorClient, Scope: core.ScopeRun,
			Description: "Read the user's calendar for one day.",
			Parameters: map[string]any{"type": "object", "required": []any{"day"},
				"properties": map[string]any{"day": map[string]any{"type": "string"}}}},
		{Name: "ability/send_email", Source: "http", Executor: core.ExecutorHost, Scope: core.ScopeRun,
			Description: "Send an email.",
			Parameters: map[string]any{"type": "object", "required": []any{"to"},
				"properties": map[string]any{"to": map[string]any{"type": "string"}, "body": map[string]any{"type": "string"}}}},
	}
}

// Plain is a request with a system prompt and one user message, no tools.
func Plain(spec core.ModelSpec) core.ModelRequest {
	return core.ModelRequest{
		RunID: "r-1", SessionID: "s-1", Turn: 1, Model: spec,
		System:   "You are a helpful assistant.",
		Messages: []core.Message{{Role: core.RoleUser, Content: "What is the capital of France?"}},
	}
}

// ToolRequest is a first turn that declares Tools.
func ToolRequest(spec core.ModelSpec, parallel bool) core.ModelRequest {
	return core.ModelRequest{
		RunID: "r-1", SessionID: "s-1", Turn: 1, Model: spec,
		System:            "You are a scheduling assistant.",
		Messages:          []core.Message{{Role: core.RoleUser, Content: "What is on my calendar on Monday and Tuesday?"}},
		Tools:             Tools(),
		ParallelToolCalls: parallel,
	}
}

// Transcript is a later turn: a system-role summary, a user message, an
// assistant text followed by two tool calls, their two results (the
// second failed), and a steering user message.
func Transcript(spec core.ModelSpec) core.ModelRequest {
	return core.ModelRequest{
		RunID: "r-1", SessionID: "s-1", Turn: 2, Model: spec,
		System: "You are a scheduling assistant.",
		Messages: []core.Message{
			{Role: core.RoleSystem, Content: "Summary of earlier conversation: the user is Alice."},
			{Role: core.RoleUser, Content: "Check Monday and email Bob the plan."},
			{Role: core.RoleAssistant, Content: "Let me check your calendar and email Bob."},
			{Role: core.RoleToolCall, Metadata: map[string]any{core.MetaToolCallID: "call_cal", core.MetaToolName: "client/get_calendar",
				core.MetaParameters: map[string]any{"day": "monday"}}},
			{Role: core.RoleToolCall, Metadata: map[string]any{core.MetaToolCallID: "call_mail", core.MetaToolName: "ability/send_email",
				core.MetaParameters: map[string]any{"to": "bob@example.com", "body": "Standup at 9", "priority": json.Number("2")}}},
			{Role: core.RoleToolResult, Content: `{"events":["09:00 standup"]}`, Metadata: map[string]any{core.MetaToolCallID: "call_cal",
				core.MetaToolName: "client/get_calendar", core.MetaSuccess: true}},
			{Role: core.RoleToolResult, Content: "The approver rejected this action: not now", Metadata: map[string]any{core.MetaToolCallID: "call_mail",
				core.MetaToolName: "ability/send_email", core.MetaSuccess: false, core.MetaErrorType: "rejected"}},
			{Role: core.RoleUser, Content: "Never mind the email."},
		},
		Tools: Tools(),
	}
}
