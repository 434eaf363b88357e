package core

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// startedRun returns a run's state and transcript right after Start: its
// first model_turn step is scheduled and not yet performed.
func startedRun(t *testing.T, clock *FixedClock) (*Machine, RunState, []Message, Step) {
	t.Helper()
	m := NewMachine(clock)
	out, err := m.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1", FirstSeq: 1,
		Config: RunConfig{Model: scripted(turn("done"))}, Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Next) != 1 || out.Next[0].Kind != StepModelTurn {
		t.Fatalf("next steps %+v", out.Next)
	}
	return m, out.State, out.Messages, out.Next[0]
}

func TestModelRetryingAndHeartbeat(t *testing.T) {
	retry := ModelRetry{Provider: "openai", Attempt: 2, Status: 429, Code: "rate_limit_exceeded", Wait: 1500 * time.Millisecond}
	cases := []struct {
		name string
		// input builds the input from the run's current model step.
		input   func(step Step) Input
		cancel  bool
		wantErr error
		// event is the event type the input must emit ("" for none).
		event string
	}{
		{name: "model_retry on the current step", input: func(s Step) Input { return ModelRetrying{Step: s, Retry: retry} }, event: EventModelRetry},
		{name: "heartbeat on the current step", input: func(s Step) Input { return Heartbeat{Step: s} }},
		{name: "model_retry on a stale step", input: func(s Step) Input { s.Seq++; return ModelRetrying{Step: s, Retry: retry} }, wantErr: ErrStaleStep},
		{name: "heartbeat on a stale step", input: func(s Step) Input { s.Seq++; return Heartbeat{Step: s} }, wantErr: ErrStaleStep},
		{name: "heartbeat on an unknown tool step", input: func(s Step) Input {
			return Heartbeat{Step: Step{Kind: StepToolCall, RunID: s.RunID, Seq: s.Seq, CallID: "c9"}}
		}, wantErr: ErrStaleStep},
		{name: "model_retry on a tool step", input: func(s Step) Input { s.Kind = StepToolCall; return ModelRetrying{Step: s, Retry: retry} }, wantErr: ErrInvalidInput},
		{name: "tool_retry on a model step", input: func(s Step) Input { return ToolRetrying{Step: s, Retry: ToolRetry{Attempt: 1}} }, wantErr: ErrInvalidInput},
		{name: "model_retry on a finished run", input: func(s Step) Input { return ModelRetrying{Step: s, Retry: retry} }, cancel: true, wantErr: ErrTerminal},
		{name: "heartbeat on a finished run", input: func(s Step) Input { return Heartbeat{Step: s} }, cancel: true, wantErr: ErrTerminal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			clock := &FixedClock{T: t0}
			m, st, tr, step := startedRun(t, clock)
			if tc.cancel {
				out, err := m.Apply(ctx, st, tr, Cancel{})
				if err != nil {
					t.Fatal(err)
				}
				st = out.State
			}
			clock.T = clock.T.Add(time.Minute)
			before := st
			out, err := m.Apply(ctx, st, tr, tc.input(step))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				if st.Version != before.Version || len(out.Events) != 0 {
					t.Fatalf("a refused input changed something: %+v", out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := out.State
			if s.Status != st.Status || s.ModelStep != step.Seq || s.Turn != st.Turn || s.Version != st.Version+1 || !s.UpdatedAt.Equal(clock.T) {
				t.Fatalf("state: status %s model step %d turn %d version %d updated %s", s.Status, s.ModelStep, s.Turn, s.Version, s.UpdatedAt)
			}
			if len(out.Messages) != 0 || len(out.Next) != 0 {
				t.Fatalf("messages %+v, next %+v", out.Messages, out.Next)
			}
			if tc.event == "" {
				if len(out.Events) != 0 {
					t.Fatalf("events %+v", out.Events)
				}
			} else {
				if len(out.Events) != 1 || out.Events[0].Type != tc.event || out.Events[0].Seq != st.NextEventSeq || out.Events[0].Turn != st.Turn+1 {
					t.Fatalf("events %+v", out.Events)
				}
				d := out.Events[0].Data
				if *d.(*ModelRetryData) != (ModelRetryData{Provider: "openai", Attempt: 2, Status: 429, Code: "rate_limit_exceeded", Wait: "1.5s"}) {
					t.Fatalf("event data %v", d)
				}
			}
			// The step is still current: its reply applies and ends the run.
			done, err := m.Apply(ctx, s, tr, ModelReplied{Step: step, Reply: ModelReply{Content: "done"}})
			if err != nil || done.State.Status != StatusCompleted {
				t.Fatalf("reply after %s: %v %s", tc.name, err, done.State.Status)
			}
		})
	}
}

// TestToolRetrying: a tool_retry on the current tool step emits its event
// (the call's tool, the attempt, the reason cut to 500 bytes, the wait)
// and leaves the step current, so the call's result still applies; on a
// step that moved on it is ErrStaleStep.
func TestToolRetrying(t *testing.T) {
	ctx := context.Background()
	m := NewMachine(&FixedClock{T: t0})
	out, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", FirstSeq: 1, Messages: user("hi"),
		Config: RunConfig{Model: scripted(turn("Asking.", call("c1", "a2a/remote", nil)), turn("done")), Tools: []ToolDeclaration{serverTool("a2a/remote", nil)}}})
	if err != nil {
		t.Fatal(err)
	}
	tr := out.Messages
	out, err = m.Apply(ctx, out.State, tr, ModelReplied{Step: out.Next[0], Reply: ModelReply{Content: "Asking.", ToolCalls: []ToolCallRequest{call("c1", "a2a/remote", nil)}}})
	if err != nil || len(out.Next) != 1 || out.Next[0].Kind != StepToolCall {
		t.Fatalf("%v %+v", err, out.Next)
	}
	tr = append(tr, out.Messages...)
	step := out.Next[0]
	retried, err := m.Apply(ctx, out.State, tr, ToolRetrying{Step: step, Retry: ToolRetry{Attempt: 2, Attempts: 5, Reason: strings.Repeat("x", 600), Wait: 20 * time.Second}})
	if err != nil || len(retried.Events) != 1 || retried.Events[0].Type != EventToolRetry {
		t.Fatalf("%v %+v", err, retried.Events)
	}
	if d := *retried.Events[0].Data.(*ToolRetryData); d != (ToolRetryData{ToolCallID: "c1", ToolName: "a2a/remote", Attempt: 2, Attempts: 5, Reason: strings.Repeat("x", 500), Wait: "20s"}) {
		t.Fatalf("event data %+v", d)
	}
	if len(retried.Next) != 0 || len(retried.Messages) != 0 || retried.State.Status != out.State.Status {
		t.Fatalf("a tool_retry scheduled or wrote something: %+v", retried)
	}
	done, err := m.Apply(ctx, retried.State, tr, ToolExecuted{Step: step, Output: map[string]any{"ok": true}})
	if err != nil || len(done.Messages) == 0 {
		t.Fatalf("the result after a tool_retry: %v %+v", err, done.Messages)
	}
	stale := step
	stale.Seq++
	if _, err := m.Apply(ctx, retried.State, tr, ToolRetrying{Step: stale, Retry: ToolRetry{Attempt: 1}}); !errors.Is(err, ErrStaleStep) {
		t.Fatalf("a stale step: %v", err)
	}
}

// retryingModel notifies its observer of n retries, then replies.
type retryingModel struct{ n int }

func (m retryingModel) Complete(ctx context.Context, req ModelRequest) (ModelReply, error) {
	for i := 1; i <= m.n; i++ {
		NotifyModelRetry(ctx, ModelRetry{Provider: "fake", Attempt: i, Status: 503, Wait: time.Second})
	}
	return ModelReply{Content: "done"}, nil
}

func TestRunnerEmitsModelRetry(t *testing.T) {
	var sunk []string
	rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: retryingModel{n: 2},
		Sink: EventSinkFunc(func(_ context.Context, ev Event) error { sunk = append(sunk, ev.Type); return nil })}
	run, err := rn.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1", Config: RunConfig{Model: scripted(turn("done"))}, Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if run.State.Status != StatusCompleted {
		t.Fatalf("status %s", run.State.Status)
	}
	var retries []Event
	for _, ev := range run.Events {
		if ev.Type == EventModelRetry {
			retries = append(retries, ev)
		}
	}
	if len(retries) != 2 || retries[0].Data.(*ModelRetryData).Attempt != 1 || retries[1].Data.(*ModelRetryData).Attempt != 2 || retries[0].Turn != 1 {
		t.Fatalf("model_retry events %+v", retries)
	}
	n := 0
	for _, typ := range sunk {
		if typ == EventModelRetry {
			n++
		}
	}
	if n != 2 || len(sunk) != len(run.Events) {
		t.Fatalf("sink saw %v", sunk)
	}
	for i := 1; i < len(run.Events); i++ {
		if run.Events[i].Seq != run.Events[i-1].Seq+1 {
			t.Fatalf("event seqs not contiguous: %+v", run.Events)
		}
	}
}

// TestRetriesReachTheRunnerThatResumes: a run resumed by another runner
// with the same context reports its model retries to that runner's sink.
func TestRetriesReachTheRunnerThatResumes(t *testing.T) {
	ctx := context.Background()
	var first, second []string
	sink := func(to *[]string) EventSink {
		return EventSinkFunc(func(_ context.Context, ev Event) error { *to = append(*to, ev.Type); return nil })
	}
	cfg := RunConfig{Model: scripted(turn("", call("c1", "client/ask", map[string]any{"day": "mon"})), turn("done"))}
	model := retryThenScript{}
	a := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: model, Sink: sink(&first)}
	run, err := a.Start(ctx, StartInput{RunID: "r", SessionID: "s", Config: cfg, RequestTools: []any{clientTool("client/ask")}, Messages: user("hi")})
	if err != nil || run.State.Status != StatusRuntimeToolPending {
		t.Fatalf("start: %v, %v", run.State.Status, err)
	}
	b := &Runner{Machine: a.Machine, Model: model, Sink: sink(&second)}
	reqs, _ := run.State.Pending()
	if err := b.Resume(ctx, run, ClientResult{RequestID: reqs[0].RequestID, Success: true, Result: "ok"}); err != nil || run.State.Status != StatusCompleted {
		t.Fatalf("resume: %v, %v", run.State.Status, err)
	}
	count := func(types []string) (n int) {
		for _, typ := range types {
			if typ == EventModelRetry {
				n++
			}
		}
		return n
	}
	if count(first) != 1 || count(second) != 1 {
		t.Fatalf("model_retry events: %d to the first runner's sink, %d to the second's; want 1 each", count(first), count(second))
	}
}

// retryThenScript notifies one retry, then plays the script.
type retryThenScript struct{}

func (retryThenScript) Complete(ctx context.Context, req ModelRequest) (ModelReply, error) {
	NotifyModelRetry(ctx, ModelRetry{Provider: "fake", Attempt: 1, Status: 503, Wait: time.Second})
	return ScriptedModel{}.Complete(ctx, req)
}
