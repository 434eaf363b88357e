package core

import (
	"context"
	"testing"
)

// plannedCalls starts a run of cfg on messages, applies a model reply with
// calls, and returns the plan of each call's step.
func plannedCalls(t *testing.T, cfg RunConfig, messages []Message, calls ...ToolCallRequest) []Plan {
	t.Helper()
	ctx := context.Background()
	m := NewMachine(&FixedClock{T: t0})
	out, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", FirstSeq: 1, Config: cfg, Messages: messages})
	if err != nil {
		t.Fatal(err)
	}
	o, err := m.Apply(ctx, out.State, out.Messages, ModelReplied{Step: out.Next[0], Reply: ModelReply{ToolCalls: calls}})
	if err != nil {
		t.Fatal(err)
	}
	tr := append(append([]Message(nil), out.Messages...), o.Messages...)
	var plans []Plan
	for _, step := range o.Next {
		p, err := m.Plan(ctx, o.State, tr, step)
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
	}
	return plans
}

// decided is the result a plan decides without execution (nil when the
// plan executes the call).
func decided(p Plan) *ToolResult {
	if d, ok := p.Input.(ToolDecided); ok && p.Kind == PlanApply && d.Decision.Kind == DecideResult {
		return &d.Decision.Result
	}
	return nil
}

// TestAgentToolsStopAtTheDepthLimit: a call of an agent tool in a run as
// deep as the limit (max_depth, else DefaultMaxDepth) gets a
// depth_exceeded result instead of a child run; one level higher it runs,
// and a server tool runs at any depth.
func TestAgentToolsStopAtTheDepthLimit(t *testing.T) {
	agentTool := ToolDeclaration{Name: "agent/helper", Source: "agent", Executor: ExecutorAgent, Scope: ScopeRun, Description: "Ask the helper.",
		Extensions: map[string]any{DeclAgent: "helper"}}
	for _, tc := range []struct {
		depth, max int
		exceeded   bool
	}{
		{0, 0, false},
		{DefaultMaxDepth - 1, 0, false},
		{DefaultMaxDepth, 0, true},
		{1, 1, true},
		{DefaultMaxDepth, DefaultMaxDepth + 1, false},
	} {
		cfg := RunConfig{Model: scripted(turn("done")), Tools: []ToolDeclaration{agentTool, serverTool("ability/search", nil)}, MaxDepth: tc.max, ParallelToolCalls: true}
		if tc.depth > 0 {
			cfg.Parent = &ParentRef{RunID: "r-0", ToolCallID: "c0", RootRunID: "r-0", Depth: tc.depth}
		}
		plans := plannedCalls(t, cfg, user("hi"), call("c1", "agent/helper", map[string]any{"task": "x"}), call("c2", "ability/search", map[string]any{"q": "x"}))
		if len(plans) != 2 {
			t.Fatalf("depth %d: %d plans", tc.depth, len(plans))
		}
		res := decided(plans[0])
		if tc.exceeded != (res != nil) || res != nil && res.ErrorType != ErrTypeDepthExceeded || !tc.exceeded && plans[0].Kind != PlanTool {
			t.Errorf("depth %d of %d: the agent tool's plan %+v", tc.depth, tc.max, plans[0])
		}
		if plans[1].Kind != PlanTool {
			t.Errorf("depth %d of %d: the server tool's plan %+v", tc.depth, tc.max, plans[1])
		}
	}
}

// TestDuplicateOfACallInTheRunsInput: a call the run's own input messages
// made and answered counts as made in this run, also when it is the
// run's first message; a call with other parameters is no duplicate.
func TestDuplicateOfACallInTheRunsInput(t *testing.T) {
	cfg := RunConfig{Model: scripted(turn("done")), Tools: []ToolDeclaration{serverTool("ability/search", nil)}}
	input := []Message{
		toolCallMessage("c0", "ability/search", map[string]any{"q": "a"}),
		{Role: RoleToolResult, Content: "found", Metadata: map[string]any{MetaToolCallID: "c0"}},
		{Role: RoleUser, Content: "and again?"},
	}
	plans := plannedCalls(t, cfg, input, call("c1", "ability/search", map[string]any{"q": "a"}))
	if res := decided(plans[0]); res == nil || res.ErrorType != ErrTypeDuplicateToolCall {
		t.Fatalf("a repeat of the input's call: %+v", plans[0])
	}
	if plans := plannedCalls(t, cfg, input, call("c1", "ability/search", map[string]any{"q": "b"})); plans[0].Kind != PlanTool {
		t.Fatalf("another call: %+v", plans[0])
	}
}
