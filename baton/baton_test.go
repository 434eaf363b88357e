package baton

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
)

func scripted(turns ...ScriptedTurn) ModelSpec {
	return ModelSpec{Provider: ProviderScripted, Turns: turns}
}

func callTurn(id, name string, params map[string]any) ScriptedTurn {
	return ScriptedTurn{ToolCalls: []ToolCallRequest{{ID: id, Name: name, Parameters: params}}}
}

var echo = Tool{Name: "t/echo", Description: "Echo.", Handler: func(_ context.Context, c ToolCall) (any, error) { return c.Parameters, nil }}

func TestAgentValidation(t *testing.T) {
	cases := []struct {
		name  string
		agent Agent
		want  string
	}{
		{"no name", Agent{Model: scripted()}, "a Name is required"},
		{"no handler", Agent{Name: "a", Model: scripted(), Tools: []Tool{{Name: "t/x", Description: "X."}}}, "a Handler is required"},
		{"not namespaced", Agent{Name: "a", Model: scripted(), Tools: []Tool{{Name: "x", Description: "X.", Handler: echo.Handler}}}, "namespaced"},
		{"no description", Agent{Name: "a", Model: scripted(), Tools: []Tool{{Name: "t/x", Handler: echo.Handler}}}, "description"},
		{"client tool", Agent{Name: "a", Model: scripted(), Tools: []Tool{{Name: "client/x", Description: "X.", Handler: echo.Handler}}}, "Request.ClientTools"},
		{"twice", Agent{Name: "a", Model: scripted(), Tools: []Tool{echo, echo}}, "declared twice"},
		{"bad budget", Agent{Name: "a", Model: scripted(), Budgets: map[string]int{"coffee": 1}}, "unknown budget"},
		{"no provider", Agent{Name: "a"}, "model.provider is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := (&Runtime{}).Start(context.Background(), c.agent, Request{Prompt: "hi"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
	if _, err := (&Runtime{}).Start(context.Background(), Agent{Name: "a", Model: scripted()}, Request{}); err == nil {
		t.Fatal("a run without messages started")
	}
}

func TestToolOutcomes(t *testing.T) {
	type in struct{ N int }
	tools := []Tool{
		{Name: "t/double", Description: "Double.", Handler: Typed(func(_ context.Context, p in, _ ToolCall) (int, error) { return 2 * p.N, nil })},
		{Name: "t/fail", Description: "Fail.", Handler: func(context.Context, ToolCall) (any, error) { return nil, errors.New("disk full") }},
		{Name: "t/panic", Description: "Panic.", Handler: func(context.Context, ToolCall) (any, error) { panic("boom") }},
		{Name: "t/envelope", Description: "Envelope.", Handler: func(context.Context, ToolCall) (any, error) {
			return map[string]any{"success": false, "error": "no stock", "error_type": "out_of_stock"}, nil
		}},
	}
	agent := Agent{Name: "a", Tools: tools, Model: scripted(
		ScriptedTurn{ToolCalls: []ToolCallRequest{
			{ID: "c1", Name: "t/double", Parameters: map[string]any{"N": 21}},
			{ID: "c2", Name: "t/double", Parameters: map[string]any{"N": "x"}},
			{ID: "c3", Name: "t/fail"}, {ID: "c4", Name: "t/panic"}, {ID: "c5", Name: "t/envelope"}}},
		ScriptedTurn{Content: "done"})}
	run, err := (&Runtime{IDs: &core.SequentialIDs{}}).Start(context.Background(), agent, Request{Prompt: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if run.ID() != "run-1" || run.SessionID() != "sess-1" || run.Status() != core.StatusCompleted {
		t.Fatalf("%s %s %s", run.ID(), run.SessionID(), run.Status())
	}
	var got []string
	for _, r := range run.Envelope().ToolExecutionResults {
		got = append(got, fmt.Sprintf("%s:%v:%s:%v", r.ToolCallID, r.Result.Success, r.Result.ErrorType, r.Result.Result))
	}
	want := "[c1:true::42 c2:false:executor_exception:<nil> c3:false:executor_exception:<nil> c4:false:executor_exception:<nil> c5:false:out_of_stock:<nil>]"
	if fmt.Sprint(got) != want {
		t.Fatalf("results\n got %v\nwant %s", got, want)
	}
}

type fixedModel struct{ calls int }

func (m *fixedModel) Complete(_ context.Context, req core.ModelRequest) (core.ModelReply, error) {
	m.calls++
	return core.ModelReply{Content: fmt.Sprintf("%s saw %d messages", req.Model.Model, len(req.Messages))}, nil
}

func TestProvidersSessionsAndControl(t *testing.T) {
	ctx := context.Background()
	model := &fixedModel{}
	var events []string
	rt := &Runtime{Providers: map[string]ModelProvider{"mine": model},
		Sink: core.EventSinkFunc(func(_ context.Context, ev core.Event) error { events = append(events, ev.Type); return nil })}
	agent := Agent{Name: "a", Model: ModelSpec{Provider: "mine", Model: "m1"}}
	first, err := rt.Start(ctx, agent, Request{Prompt: "one", Metadata: map[string]any{"trace": "t1"}})
	if err != nil || first.Envelope().FinalContent != "m1 saw 1 messages" || len(events) == 0 {
		t.Fatalf("%v %v %v", err, first.Envelope().FinalContent, events)
	}
	second, err := rt.Continue(ctx, agent, first, Request{Prompt: "two"})
	if err != nil || second.SessionID() != first.SessionID() || second.Envelope().FinalContent != "m1 saw 3 messages" || len(second.Envelope().Messages) != 4 {
		t.Fatalf("continue: %v %+v", err, second.Envelope())
	}
	if _, err := rt.Continue(ctx, agent, first, Request{Prompt: "x", SessionID: "other"}); err == nil {
		t.Fatal("continued into another session")
	}

	// A paused run: Continue refuses, Reject, Steer and Cancel work.
	send := Tool{Name: "t/send", Description: "Send.", ActionPolicy: "preview", Handler: echo.Handler}
	mailer := Agent{Name: "m", Tools: []Tool{send}, Model: scripted(callTurn("c1", "t/send", map[string]any{"to": "x"}), ScriptedTurn{Content: "ok"},
		callTurn("c2", "t/send", map[string]any{"to": "y"}))}
	run, err := rt.Start(ctx, mailer, Request{Prompt: "send"})
	if err != nil || run.Status() != core.StatusApprovalRequired {
		t.Fatalf("%v %s", err, run.Status())
	}
	if _, err := rt.Continue(ctx, mailer, run, Request{Prompt: "again"}); err == nil || !strings.Contains(err.Error(), "unfinished") {
		t.Fatalf("continue a paused run: %v", err)
	}
	_, acts := run.Pending()
	if err := run.Reject(ctx, acts[0].ActionID, "not now"); err != nil {
		t.Fatal(err)
	}
	r := run.Envelope().ToolExecutionResults[0].Result
	if run.Status() != core.StatusCompleted || r.ErrorType != core.ErrTypeRejected || !strings.Contains(r.Error, "not now") {
		t.Fatalf("reject: %s %+v", run.Status(), r)
	}
	if err := run.Approve(ctx, acts[0].ActionID, ""); err == nil {
		t.Fatal("a second decision was accepted")
	}

	run, _ = rt.Start(ctx, mailer, Request{Prompt: "send", Model: &ModelSpec{Provider: ProviderScripted, Turns: []ScriptedTurn{callTurn("c9", "t/send", map[string]any{"to": "z"})}}})
	if err := run.Steer(ctx, "Also cc Bob."); err != nil {
		t.Fatal(err)
	}
	if err := run.Cancel(ctx, "user left"); err != nil || run.Status() != core.StatusCancelled || !run.Done() {
		t.Fatalf("cancel: %v %s", err, run.Status())
	}
	tr := run.Transcript()
	if last := tr[len(tr)-1]; last.Role != core.RoleToolResult || last.Metadata[core.MetaErrorType] != core.ErrTypeCancelled {
		t.Fatalf("last message %+v", last)
	}
}

func TestRequestOverridesAndBudgets(t *testing.T) {
	agent := Agent{Name: "a", Tools: []Tool{echo}, Budgets: map[string]int{"tool_calls": 10}, Model: scripted(
		ScriptedTurn{ToolCalls: []ToolCallRequest{{ID: "c1", Name: "t/echo", Parameters: map[string]any{"a": 1}}, {ID: "c2", Name: "t/echo", Parameters: map[string]any{"a": 2}}}},
		ScriptedTurn{Content: "never"})}
	run, err := (&Runtime{}).Start(context.Background(), agent, Request{Prompt: "go", Budgets: map[string]int{"tool_calls": 1}})
	if err != nil || run.Status() != core.StatusBudgetExceeded || run.Envelope().Budget != "tool_calls" {
		t.Fatalf("%v %s", err, run.Status())
	}
	if agent.Budgets["tool_calls"] != 10 {
		t.Fatal("a request changed the agent's budgets")
	}
	run, err = (&Runtime{}).Start(context.Background(), agent, Request{Prompt: "go", MaxTurns: 1})
	if err != nil || run.Status() != core.StatusMaxTurnsReached {
		t.Fatalf("%v %s", err, run.Status())
	}
}

// TestSubmitToolError: a client tool's failure submitted with
// SubmitToolError reaches the model as a failed result carrying the
// caller's message (error_type client_error), and the run goes on to
// complete; the request is then answered, so a second submission fails.
func TestSubmitToolError(t *testing.T) {
	ctx := context.Background()
	locate := map[string]any{"name": "client/locate", "description": "Locate the user.", "parameters": map[string]any{"type": "object"}}
	agent := Agent{Name: "a", Model: scripted(callTurn("c1", "client/locate", map[string]any{}), ScriptedTurn{Content: "I could not find you."})}
	run, err := (&Runtime{}).Start(ctx, agent, Request{Prompt: "Where am I?", ClientTools: []map[string]any{locate}})
	if err != nil || run.Status() != core.StatusRuntimeToolPending {
		t.Fatalf("start: %v %s", err, run.Status())
	}
	reqs, _ := run.Pending()
	if len(reqs) != 1 {
		t.Fatalf("pending requests %+v", reqs)
	}
	if err := run.SubmitToolError(ctx, reqs[0].RequestID, "GPS is off"); err != nil {
		t.Fatal(err)
	}
	if run.Status() != core.StatusCompleted {
		t.Fatalf("status %s after the error was submitted", run.Status())
	}
	res := run.Envelope().ToolExecutionResults
	if len(res) != 1 || res[0].Result.Success || res[0].Result.ErrorType != core.ErrTypeClientError || res[0].Result.Error != "GPS is off" {
		t.Fatalf("tool results %+v", res)
	}
	var seen bool
	for _, m := range run.Transcript() {
		if m.Role == core.RoleToolResult && m.Content == "GPS is off" && m.Metadata[core.MetaSuccess] == false {
			seen = true
		}
	}
	if !seen {
		t.Fatalf("the failed result is not in the transcript: %+v", run.Transcript())
	}
	if err := run.SubmitToolError(ctx, reqs[0].RequestID, "again"); err == nil {
		t.Fatal("a second submission for an answered request was accepted")
	}
}

// TestCompaction: an agent with compaction, and nothing else, has its
// long session summarized by its model before the turn, in the same call.
func TestCompaction(t *testing.T) {
	agent := Agent{Name: "a", Model: scripted(ScriptedTurn{Content: "First."}),
		Compaction: &CompactionPolicy{Enabled: true, MaxMessages: 4, RecentMessages: 2}}
	var msgs []Message
	for _, s := range []string{"one", "two", "three", "four", "five"} {
		msgs = append(msgs, Message{Role: core.RoleUser, Content: s})
	}
	run, err := (&Runtime{}).Start(context.Background(), agent, Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	env := run.Envelope()
	if env.Status != core.StatusCompleted || len(env.Messages) != 7 || env.Messages[5].Content != "[Conversation summary: Summary of 3 earlier messages.]" {
		t.Fatalf("status %s, messages %+v", env.Status, env.Messages)
	}
	if _, err := (&Runtime{}).Start(context.Background(), Agent{Name: "a", Model: scripted(), Compaction: &CompactionPolicy{Enabled: true}}, Request{Prompt: "hi"}); err == nil ||
		!strings.Contains(err.Error(), "compaction.max_messages must be at least 2") {
		t.Fatalf("bad policy: %v", err)
	}
}
