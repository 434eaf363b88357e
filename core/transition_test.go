package core

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestStepSeqCountsFromOne: a run's steps are numbered 1, 2, 3, … in
// the order they are scheduled (StepSeq counts them; 0 is no step).
func TestStepSeqCountsFromOne(t *testing.T) {
	ctx := context.Background()
	m := NewMachine(&FixedClock{T: t0})
	cfg := RunConfig{Model: scripted(), ParallelToolCalls: true, Tools: []ToolDeclaration{serverTool("ability/search", nil)}}
	o, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", Config: cfg, Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Next) != 1 || o.Next[0].Seq != 1 || o.State.StepSeq != 1 {
		t.Fatalf("start: steps %+v, step_seq %d", o.Next, o.State.StepSeq)
	}
	transcript := o.Messages
	o, err = m.Apply(ctx, o.State, transcript, ModelReplied{Step: o.Next[0], Reply: ModelReply{ToolCalls: []ToolCallRequest{
		call("c1", "ability/search", map[string]any{"q": "a"}), call("c2", "ability/search", map[string]any{"q": "b"})}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Next) != 2 || o.Next[0].Seq != 2 || o.Next[1].Seq != 3 || o.State.StepSeq != 3 {
		t.Fatalf("two calls: steps %+v, step_seq %d", o.Next, o.State.StepSeq)
	}
}

// TestBlankReplyAppendsNothing: a final reply of white space only is no
// message, and no messages_updated reports a range for it.
func TestBlankReplyAppendsNothing(t *testing.T) {
	run, _ := runWithSink(t, RunConfig{Model: scripted(turn(" \n "))}, nil)
	if run.State.Status != StatusCompleted || len(run.Transcript) != 1 {
		t.Fatalf("status %s, transcript of %d", run.State.Status, len(run.Transcript))
	}
	if evs := eventsOf(run.Events, EventMessagesUpdated); len(evs) != 0 {
		t.Fatalf("messages_updated for no message: %+v", evs[0].Data)
	}
}

// TestRequestMetadataKeepsTheLatestReported: the run's request_metadata
// is that of the latest reply that reported any; a reply without leaves
// it as it was.
func TestRequestMetadataKeepsTheLatestReported(t *testing.T) {
	model := modelFunc(func(_ context.Context, r ModelRequest) (ModelReply, error) {
		if r.Turn == 1 {
			return ModelReply{ToolCalls: []ToolCallRequest{call("c1", "ability/search", map[string]any{"q": "a"})}, RequestMetadata: map[string]any{"request_id": "req-1"}}, nil
		}
		return ModelReply{Content: "done"}, nil
	})
	run, _ := runWithSink(t, RunConfig{Model: scripted()}, model)
	if run.State.Status != StatusCompleted || run.State.RequestMetadata["request_id"] != "req-1" {
		t.Fatalf("status %s, request_metadata %v", run.State.Status, run.State.RequestMetadata)
	}
}

// TestToolRetryWithoutWait: a tool_retry event names a wait only when
// the executor waits before its next attempt.
func TestToolRetryWithoutWait(t *testing.T) {
	ctx := context.Background()
	m := NewMachine(&FixedClock{T: t0})
	cfg := RunConfig{Model: scripted(), Tools: []ToolDeclaration{serverTool("a2a/remote", nil)}}
	out, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", Config: cfg, Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	tr := out.Messages
	out, err = m.Apply(ctx, out.State, tr, ModelReplied{Step: out.Next[0], Reply: ModelReply{ToolCalls: []ToolCallRequest{call("c1", "a2a/remote", nil)}}})
	if err != nil || len(out.Next) != 1 {
		t.Fatalf("%v %+v", err, out.Next)
	}
	retried, err := m.Apply(ctx, out.State, append(tr, out.Messages...), ToolRetrying{Step: out.Next[0], Retry: ToolRetry{Attempt: 1, Attempts: 3, Reason: "503"}})
	if err != nil || len(retried.Events) != 1 {
		t.Fatalf("%v %+v", err, retried.Events)
	}
	if d := retried.Events[0].Data.(*ToolRetryData); d.Wait != "" || d.Reason != "503" {
		t.Fatalf("event data %+v", d)
	}
}

// TestOutputGuardrailSeesTheReply: the output guardrail gets the reply as
// an assistant message, its tool calls (only when it has some) in the
// metadata.
func TestOutputGuardrailSeesTheReply(t *testing.T) {
	var seen []Message
	m := NewMachine(&FixedClock{T: t0})
	m.Guardrails.Output = func(_ context.Context, msg Message) GuardrailResult {
		seen = append(seen, msg)
		return Allow()
	}
	rn := &Runner{Machine: m, Model: ScriptedModel{}, Tools: ToolExecutorFunc(func(context.Context, ToolCall) (any, error) { return "ok", nil })}
	cfg := RunConfig{Model: scripted(turn("Looking.", call("c1", "ability/search", map[string]any{"q": "a"})), turn("Found it.")),
		Tools: []ToolDeclaration{serverTool("ability/search", nil)}}
	if _, err := rn.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1", Config: cfg, Messages: user("hi")}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0].Role != RoleAssistant || seen[0].Content != "Looking." || seen[1].Content != "Found it." {
		t.Fatalf("the guardrail saw %+v", seen)
	}
	calls, _ := seen[0].Metadata["tool_calls"].([]any)
	if len(calls) != 1 || calls[0].(map[string]any)["id"] != "c1" || calls[0].(map[string]any)["name"] != "ability/search" {
		t.Fatalf("the first reply's calls: %+v", seen[0].Metadata)
	}
	if seen[1].Metadata != nil {
		t.Fatalf("a reply without calls carries metadata %+v", seen[1].Metadata)
	}
}

// TestSourceDownAlone: a ToolsDiscovered that only reports a source
// down adds no tools and emits no tools_discovered.
func TestSourceDownAlone(t *testing.T) {
	ctx := context.Background()
	m := NewMachine(&FixedClock{T: t0})
	out, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", Messages: user("hi"), Config: RunConfig{Model: scripted(turn("done"))}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Apply(ctx, out.State, nil, ToolsDiscovered{Unavailable: []ToolSourceFailure{{Source: "mcp/down", Error: "connection refused"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != 1 || got.Events[0].Type != EventToolSourceUnavailable || len(got.State.Config.Tools) != 0 || len(got.State.Config.Visible) != 0 {
		t.Fatalf("events %+v, tools %v, visible %v", got.Events, got.State.Config.Tools, got.State.Config.Visible)
	}
}

// TestSteeringLength: a steering message of MaxSteeringChars characters
// (runes, not bytes) is queued; one more is refused.
func TestSteeringLength(t *testing.T) {
	ctx := context.Background()
	m := NewMachine(&FixedClock{T: t0})
	out, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", Messages: user("hi"), Config: RunConfig{Model: scripted(turn("done"))}})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", MaxSteeringChars)
	got, err := m.Apply(ctx, out.State, out.Messages, Steer{Content: long})
	if err != nil || len(got.State.Inbox) != 1 {
		t.Fatalf("%d characters: %v, inbox of %d", MaxSteeringChars, err, len(got.State.Inbox))
	}
	if _, err := m.Apply(ctx, out.State, out.Messages, Steer{Content: long + "é"}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("%d characters: %v", MaxSteeringChars+1, err)
	}
}

// TestApprovalSummaryLength: an approval's summary is at most 500 bytes:
// one of exactly 500 is kept whole, a longer one cut to 497 and "...".
func TestApprovalSummaryLength(t *testing.T) {
	prefix := len(`Call x with {"q":""}`)
	exact := approvalSummary("x", map[string]any{"q": strings.Repeat("a", 500-prefix)})
	if len(exact) != 500 || strings.HasSuffix(exact, "...") {
		t.Fatalf("a summary of %d bytes: %q", len(exact), exact[len(exact)-10:])
	}
	over := approvalSummary("x", map[string]any{"q": strings.Repeat("a", 501-prefix)})
	if len(over) != 500 || !strings.HasSuffix(over, `aaa...`) {
		t.Fatalf("a summary of 501 bytes cut to %d: %q", len(over), over[len(over)-10:])
	}
}

// TestToolResultMaxBytes: a result of exactly tool_result_max_bytes (its
// canonical JSON) is kept; one byte more is stored truncated.
func TestToolResultMaxBytes(t *testing.T) {
	for _, tc := range []struct {
		extra     int
		truncated bool
	}{{0, false}, {1, true}} {
		const limit = 64
		// A JSON string of limit+extra bytes: its two quotes and the text.
		result := strings.Repeat("a", limit-2+tc.extra)
		rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: ScriptedModel{},
			Tools: ToolExecutorFunc(func(context.Context, ToolCall) (any, error) { return result, nil })}
		cfg := RunConfig{Model: scripted(turn("", call("c1", "ability/search", nil)), turn("done")), ToolResultMaxBytes: limit,
			Tools: []ToolDeclaration{serverTool("ability/search", nil)}}
		run, err := rn.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1", Config: cfg, Messages: user("hi")})
		if err != nil {
			t.Fatal(err)
		}
		if len(run.ToolResults) != 1 {
			t.Fatalf("%d results", len(run.ToolResults))
		}
		_, cut := run.ToolResults[0].Result.Result.(map[string]any)
		if cut != tc.truncated || len(eventsOf(run.Events, EventToolResultTruncated)) != map[bool]int{true: 1}[tc.truncated] {
			t.Fatalf("a result of %d bytes: truncated %v, want %v", limit+tc.extra, cut, tc.truncated)
		}
	}
}

// TestReplyReusingACallID: a call the model names with an id the
// transcript already holds gets that id with a suffix.
func TestReplyReusingACallID(t *testing.T) {
	ctx := context.Background()
	m := NewMachine(&FixedClock{T: t0})
	out, err := m.Start(ctx, StartInput{RunID: "r1", SessionID: "s1", FirstSeq: 1,
		Config:   RunConfig{Model: ModelSpec{Provider: ProviderScripted}, Tools: []ToolDeclaration{{Name: "search", Source: "go"}}},
		Messages: []Message{{Role: RoleUser, Content: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	st, tr := out.State, out.Messages
	apply := applier(t, m, &st, &tr)
	call := ModelReply{ToolCalls: []ToolCallRequest{{ID: "c1", Name: "search"}}}
	o := apply(ModelReplied{Step: out.Next[0], Reply: call})
	o = apply(ToolExecuted{Step: o.Next[0], Output: "x"})
	apply(ModelReplied{Step: o.Next[0], Reply: call})
	if len(st.Calls) != 1 || st.Calls[0].ID != "c1_2" {
		t.Fatalf("the second call: %+v, want id c1_2", st.Calls)
	}
}

// TestUnknownPendingItemNamed: an answer to no pending item says which
// kind of item it named.
func TestUnknownPendingItemNamed(t *testing.T) {
	ctx := context.Background()
	m := NewMachine(&FixedClock{T: t0})
	out, err := m.Start(ctx, StartInput{RunID: "r1", SessionID: "s1", FirstSeq: 1,
		Config: RunConfig{Model: ModelSpec{Provider: ProviderScripted}}, Messages: []Message{{Role: RoleUser, Content: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   Input
		want string
	}{
		{ApprovalDecision{ActionID: "act_x", Decision: "accept"}, `no pending action "act_x"`},
		{ClientResult{RequestID: "req_x", Success: true, Result: map[string]any{"ok": true}}, `no pending tool request "req_x"`},
	} {
		_, err := m.Apply(ctx, out.State, out.Messages, tc.in)
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%T: %v, want %s", tc.in, err, tc.want)
		}
	}
}

// applier returns apply, which applies an input to the run's state *st
// and transcript *tr and advances them with its output.
func applier(t *testing.T, m *Machine, st *RunState, tr *[]Message) func(Input) Output {
	apply := applierIn(t, m, st, tr)
	return func(in Input) Output {
		t.Helper()
		return apply(context.Background(), in)
	}
}

// applierIn is applier with the context each input is applied in.
func applierIn(t *testing.T, m *Machine, st *RunState, tr *[]Message) func(context.Context, Input) Output {
	return func(ctx context.Context, in Input) Output {
		t.Helper()
		o, err := m.Apply(ctx, *st, *tr, in)
		if err != nil {
			t.Fatalf("%T: %v", in, err)
		}
		*st, *tr = o.State, append(*tr, o.Messages...)
		return o
	}
}

// TestDoneResponseIsTheRunsOwn: a run whose model adds no text answers
// with the last assistant text among its own messages (its input's,
// from its first message on), never with an earlier run's of the
// session.
func TestDoneResponseIsTheRunsOwn(t *testing.T) {
	earlier := []Message{{Role: RoleUser, Content: "earlier", Seq: 1}, {Role: RoleAssistant, Content: "An earlier run's answer.", Seq: 2}}
	for _, tc := range []struct {
		input []Message
		want  string
	}{
		{[]Message{{Role: RoleAssistant, Content: "Prefilled."}}, "Prefilled."},
		{user("hi"), ""},
	} {
		ctx := context.Background()
		m := NewMachine(&FixedClock{T: t0})
		out, err := m.Start(ctx, StartInput{RunID: "r-2", SessionID: "s-1", FirstSeq: 3, Config: RunConfig{Model: scripted()}, Messages: tc.input})
		if err != nil {
			t.Fatal(err)
		}
		tr := append(slices.Clone(earlier), out.Messages...)
		got, err := m.Apply(ctx, out.State, tr, ModelReplied{Step: out.Next[0], Reply: ModelReply{}})
		if err != nil {
			t.Fatal(err)
		}
		done := eventsOf(got.Events, EventDone)
		if got.State.Status != StatusCompleted || len(done) != 1 || done[0].Data.(*DoneData).Response != tc.want {
			t.Errorf("input %+v: status %s, done %+v, want response %q", tc.input, got.State.Status, done, tc.want)
		}
	}
}
