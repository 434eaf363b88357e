package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// sinkRecorder is an EventSink that keeps what it is handed.
type sinkRecorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *sinkRecorder) Emit(_ context.Context, ev Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return nil
}

func (r *sinkRecorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.events))
	for i, ev := range r.events {
		out[i] = ev.Type
	}
	return out
}

// runWithSink drives cfg in process with search (echo), boom (panics)
// and fail (returns an error) as server tools, and a recording sink.
func runWithSink(t *testing.T, cfg RunConfig, model ModelProvider) (*Run, *sinkRecorder) {
	t.Helper()
	rec := &sinkRecorder{}
	if model == nil {
		model = ScriptedModel{}
	}
	cfg.Tools = append(cfg.Tools, serverTool("ability/search", nil), serverTool("ability/boom", nil), serverTool("ability/fail", nil))
	rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: model, Sink: rec,
		Tools: ToolExecutorFunc(func(_ context.Context, c ToolCall) (any, error) {
			switch c.ToolName {
			case "ability/boom":
				panic("kaboom")
			case "ability/fail":
				return nil, errors.New("disk full")
			}
			return map[string]any{"echo": c.Parameters}, nil
		})}
	run, err := rn.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1", Config: cfg, Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	return run, rec
}

func eventsOf(evs []Event, typ string) []Event {
	var out []Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func indexOf(evs []Event, typ, callID string) int {
	for i, ev := range evs {
		if ev.Type == typ && (callID == "" || ev.Fields()["tool_call_id"] == callID) {
			return i
		}
	}
	return -1
}

func TestToolCallStartPrecedesExecutionAndCarriesRedactedArguments(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprint("parallel=", parallel), func(t *testing.T) {
			rec := &sinkRecorder{}
			var mu sync.Mutex
			startedAtExecution := map[string]bool{}
			rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: ScriptedModel{}, Sink: rec,
				Tools: ToolExecutorFunc(func(_ context.Context, c ToolCall) (any, error) {
					rec.mu.Lock()
					started := indexOf(rec.events, EventToolCallStart, c.ToolCallID) >= 0
					rec.mu.Unlock()
					mu.Lock()
					startedAtExecution[c.ToolCallID] = started
					mu.Unlock()
					return "ok", nil
				})}
			cfg := RunConfig{ParallelToolCalls: parallel, Tools: []ToolDeclaration{serverTool("ability/search", nil)}, Model: scripted(
				turn("", call("c1", "ability/search", map[string]any{"q": "a", "api_key": "sk-1"}), call("c2", "ability/search", map[string]any{"q": "b"})),
				turn("done"))}
			run, err := rn.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1", Config: cfg, Messages: user("hi")})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"c1", "c2"} {
				if !startedAtExecution[id] {
					t.Errorf("%s executed before its tool_call_start", id)
				}
				if s, r := indexOf(run.Events, EventToolCallStart, id), indexOf(run.Events, EventToolResult, id); s < 0 || r < s {
					t.Errorf("%s: tool_call_start at %d, tool_result at %d", id, s, r)
				}
			}
			start := run.Events[indexOf(run.Events, EventToolCallStart, "c1")]
			want := map[string]any{"name": "ability/search", "arguments": `{"api_key":"[redacted]","q":"a"}`, "tool_call_id": "c1"}
			if fmt.Sprint(start.Fields()) != fmt.Sprint(want) {
				t.Fatalf("tool_call_start data %v, want %v", start.Fields(), want)
			}
			// Sequential calls start one after another; parallel ones all
			// start before the first result.
			secondStart, firstResult := indexOf(run.Events, EventToolCallStart, "c2"), indexOf(run.Events, EventToolResult, "c1")
			if parallel != (secondStart < firstResult) {
				t.Fatalf("parallel=%v: c2 starts at %d, c1's result at %d", parallel, secondStart, firstResult)
			}
		})
	}
}

func TestToolResultEventCarriesTheResult(t *testing.T) {
	long := strings.Repeat("é", EventResultMaxBytes) // two bytes a rune
	cases := []struct {
		name      string
		call      ToolCallRequest
		maxBytes  int
		want      string
		wantCut   bool
		wantError string
	}{
		{name: "redacted success", call: call("c1", "ability/search", map[string]any{"q": "a", "password": "hunter2"}),
			want: `{"echo":{"password":"[redacted]","q":"a"}}`},
		{name: "executor error", call: call("c1", "ability/fail", nil), want: "Tool execution failed: disk full", wantError: ErrTypeExecutorException},
		{name: "not found", call: call("c1", "ability/nope", nil), want: "Tool 'ability/nope' not found", wantError: ErrTypeToolNotFound},
		{name: "cut to the event bound", call: call("c1", "ability/search", map[string]any{"q": long}), wantCut: true},
		{name: "stored truncated", call: call("c1", "ability/search", map[string]any{"q": "0123456789"}), maxBytes: 8,
			want: `{"original_bytes":27,"truncated":true}`, wantCut: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run, _ := runWithSink(t, RunConfig{ToolResultMaxBytes: tc.maxBytes, Model: scripted(turn("", tc.call), turn("ok"))}, nil)
			evs := eventsOf(run.Events, EventToolResult)
			if len(evs) != 1 {
				t.Fatalf("%d tool_result events", len(evs))
			}
			d := evs[0].Fields()
			res, _ := d["result"].(string)
			if d["name"] != tc.call.Name || d["tool_name"] != tc.call.Name || d["tool_call_id"] != "c1" || d["success"] != (tc.wantError == "") {
				t.Fatalf("data %v", d)
			}
			if tc.wantError != "" && d["error_type"] != tc.wantError {
				t.Fatalf("error_type %v, want %s", d["error_type"], tc.wantError)
			}
			if cut, _ := d["result_truncated"].(bool); cut != tc.wantCut {
				t.Fatalf("result_truncated = %v, want %v", cut, tc.wantCut)
			}
			if tc.want != "" && res != tc.want {
				t.Fatalf("result %q, want %q", res, tc.want)
			}
			if tc.wantCut && tc.maxBytes == 0 {
				if len(res) > EventResultMaxBytes || len(res) < EventResultMaxBytes-1 || !utf8.ValidString(res) {
					t.Fatalf("cut result has %d bytes (valid UTF-8: %v)", len(res), utf8.ValidString(res))
				}
				if !strings.HasPrefix(run.Transcript[2].Content, res) {
					t.Fatal("cut result is not a prefix of the result message")
				}
			}
		})
	}
}

func TestMessagesUpdatedFollowsEveryAppendWithItsRange(t *testing.T) {
	run, rec := runWithSink(t, RunConfig{Model: scripted(
		turn("Looking.", call("c1", "ability/search", map[string]any{"q": "a"})),
		turn("Found it."))}, nil)
	// Every message after the run's input is covered by exactly one
	// messages_updated range, which follows the append.
	covered := map[int64]string{}
	for _, ev := range eventsOf(run.Events, EventMessagesUpdated) {
		d := ev.Data.(*MessagesUpdatedData)
		for s := d.FromSeq; s <= d.ToSeq; s++ {
			if covered[s] != "" {
				t.Fatalf("message %d reported twice", s)
			}
			covered[s] = d.Reason
		}
	}
	want := map[int64]string{2: MessagesModelReply, 3: MessagesModelReply, 4: MessagesToolResult, 5: MessagesModelReply}
	if fmt.Sprint(covered) != fmt.Sprint(want) || len(run.Transcript) != 5 {
		t.Fatalf("ranges cover %v, want %v (transcript of %d)", covered, want, len(run.Transcript))
	}
	if r, u := indexOf(run.Events, EventToolResult, "c1"), indexOf(run.Events[indexOf(run.Events, EventToolResult, "c1"):], EventMessagesUpdated, ""); r < 0 || u != 1 {
		t.Fatalf("messages_updated does not follow tool_result: %v", rec.types())
	}
	// The sink gets the transcript through each append; the stored
	// events carry no messages.
	for _, ev := range run.Events {
		if _, ok := ev.Fields()["messages"]; ok {
			t.Fatalf("stored %s event carries messages", ev.Type)
		}
	}
	for _, ev := range eventsOf(rec.events, EventMessagesUpdated) {
		msgs, to := ev.Data.(*MessagesUpdatedData).Messages, ev.Data.(*MessagesUpdatedData).ToSeq
		if len(msgs) == 0 || msgs[len(msgs)-1].Seq != to || int64(len(msgs)) != to {
			t.Fatalf("sink's messages_updated through %d has %d messages", to, len(msgs))
		}
	}
}

func TestMessagesUpdatedForDrainedAndTrimmedMessages(t *testing.T) {
	m := NewMachine(&FixedClock{T: t0})
	st := RunState{RunID: "r", Status: StatusRunning, NextMsgSeq: 5, NextEventSeq: 1, ModelStep: 3,
		Config: RunConfig{ContextBudget: 60},
		Inbox:  []InboxMessage{{Source: "steering", Content: "a"}, {Source: "steering", Content: "b"}, {Source: "completion_policy", Content: "go on"}}}
	transcript := []Message{{Seq: 1, Role: RoleUser, Content: strings.Repeat("x", 50)}, {Seq: 2, Role: RoleAssistant, Content: "y"},
		{Seq: 3, Role: RoleUser, Content: "z"}, {Seq: 4, Role: RoleAssistant, Content: "w"}}
	out, err := m.Apply(context.Background(), st, transcript, ModelReplied{Step: Step{Kind: StepModelTurn, RunID: "r", Seq: 3}, Reply: ModelReply{Content: "ok"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range out.Events {
		switch ev.Type {
		case EventMessagesUpdated, EventStatus:
			got = append(got, fmt.Sprint(ev.Type, " ", ev.Fields()))
		}
	}
	want := []string{
		"messages_updated map[from_seq:5 reason:steering to_seq:6]",
		"messages_updated map[from_seq:7 reason:completion_policy to_seq:7]",
		"status map[message:Injected 2 steering message(s)]",
		"messages_updated map[budget:60 dropped:2 kept:6 reason:context_trimmed]",
		"messages_updated map[from_seq:8 reason:model_reply to_seq:8]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDoneIsLastOnlyOnCompletion(t *testing.T) {
	cases := []struct {
		name     string
		cfg      RunConfig
		wantDone string // the response; "-" for no done event
	}{
		{name: "completed", cfg: RunConfig{Model: scripted(turn("Working.", call("c1", "ability/search", nil)), turn(""))}, wantDone: "Working."},
		{name: "completed without text", cfg: RunConfig{Model: scripted(turn(""))}, wantDone: ""},
		{name: "max turns", cfg: RunConfig{MaxTurns: 1, Model: scripted(turn("x", call("c1", "ability/search", nil)))}, wantDone: "-"},
		{name: "budget", cfg: RunConfig{Budgets: map[string]int{"tool_calls": 1}, Model: scripted(turn("", call("c1", "ability/search", nil)))}, wantDone: "-"},
		{name: "failed", cfg: RunConfig{Model: scripted()}, wantDone: "-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run, rec := runWithSink(t, tc.cfg, nil)
			done := eventsOf(run.Events, EventDone)
			if tc.wantDone == "-" {
				if len(done) != 0 {
					t.Fatalf("done on status %s", run.State.Status)
				}
				return
			}
			last := run.Events[len(run.Events)-1]
			if len(done) != 1 || last.Type != EventDone || run.Events[len(run.Events)-2].Type != EventCompleted {
				t.Fatalf("events end %v", rec.types())
			}
			if last.Fields()["response"] != tc.wantDone || run.Envelope().FinalContent != tc.wantDone || len(last.Fields()) != 1 {
				t.Fatalf("done data %v, want response %q", last.Data, tc.wantDone)
			}
			sunk := rec.events[len(rec.events)-1]
			if d, _ := sunk.Data.(*DoneData); sunk.Type != EventDone || d == nil || len(d.Messages) != len(run.Transcript) || d.Response != tc.wantDone {
				t.Fatalf("sink's done: %v", sunk)
			}
		})
	}
}

func TestToolPanicEmitsAnErrorAndTheRunGoesOn(t *testing.T) {
	run, _ := runWithSink(t, RunConfig{Model: scripted(
		turn("", call("c1", "ability/boom", nil), call("c2", "ability/fail", nil)), turn("Recovered."))}, nil)
	errs := eventsOf(run.Events, EventError)
	want := map[string]any{"message": "Tool 'ability/boom' panicked: kaboom", "tool_name": "ability/boom", "tool_call_id": "c1"}
	if len(errs) != 1 || fmt.Sprint(errs[0].Fields()) != fmt.Sprint(want) {
		t.Fatalf("error events %v, want one with %v (an executor error is no panic)", errs, want)
	}
	if e, r := indexOf(run.Events, EventError, ""), indexOf(run.Events, EventToolResult, "c1"); e > r {
		t.Fatalf("error at %d after the tool_result at %d", e, r)
	}
	if run.State.Status != StatusCompleted || run.ToolResults[0].Result.ErrorType != ErrTypeExecutorException ||
		run.ToolResults[0].Result.Error != "Tool execution failed: panic: kaboom" {
		t.Fatalf("status %s, result %+v", run.State.Status, run.ToolResults[0].Result)
	}
}

func TestExecuteToolReportsPanics(t *testing.T) {
	_, err := ExecuteTool(context.Background(), ToolExecutorFunc(func(context.Context, ToolCall) (any, error) { panic(errors.New("nil map")) }), ToolCall{})
	var p *ToolPanic
	if !errors.As(err, &p) || err.Error() != "panic: nil map" {
		t.Fatalf("err = %v", err)
	}
	_, err = ExecuteTool(context.Background(), ToolExecutorFunc(func(context.Context, ToolCall) (any, error) { return nil, errors.New("x") }), ToolCall{})
	if errors.As(err, &p) {
		t.Fatal("an executor error reported as a panic")
	}
}

func TestRunnerStreamsTokensToTheSink(t *testing.T) {
	spec := scripted(
		ScriptedTurn{Thinking: "hmm", ToolCalls: []ToolCallRequest{call("c1", "ability/search", nil)}},
		ScriptedTurn{Content: "Hello there", Thinking: "ok"})
	spec.Options = map[string]any{ScriptedChunkChars: float64(4)}
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprint("no_token_stream=", off), func(t *testing.T) {
			run, rec := runWithSink(t, RunConfig{NoTokenStream: off, Model: spec}, nil)
			var got []string
			for _, ev := range rec.events {
				if ev.Type == EventToken || ev.Type == EventThinking {
					if ev.Seq != 0 || len(ev.Fields()) != 1 {
						t.Fatalf("ephemeral event %+v", ev)
					}
					got = append(got, fmt.Sprintf("%d:%s:%s", ev.Turn, ev.Type, ev.Data.(*TokenData).Token))
				}
			}
			want := "[1:thinking:hmm 2:thinking:ok 2:token:Hell 2:token:o th 2:token:ere]"
			if off {
				want = "[]"
			}
			if fmt.Sprint(got) != want {
				t.Fatalf("deltas %v, want %s", got, want)
			}
			if len(eventsOf(run.Events, EventToken))+len(eventsOf(run.Events, EventThinking)) != 0 {
				t.Fatal("token events stored with the run")
			}
			if len(rec.events) != len(run.Events)+len(got) {
				t.Fatalf("sink got %d events, the run stored %d and %d deltas", len(rec.events), len(run.Events), len(got))
			}
		})
	}
}

func TestRunnerWithoutSinkDoesNotStream(t *testing.T) {
	streamed := false
	model := modelFunc(func(ctx context.Context, r ModelRequest) (ModelReply, error) {
		streamed = streamed || StreamsTokens(ctx)
		return ScriptedModel{}.Complete(ctx, r)
	})
	rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: model}
	if _, err := rn.Start(context.Background(), StartInput{RunID: "r", SessionID: "s", Config: RunConfig{Model: scripted(turn("ok"))}, Messages: user("x")}); err != nil {
		t.Fatal(err)
	}
	if streamed {
		t.Fatal("a model call without a sink was asked to stream")
	}
}

type modelFunc func(ctx context.Context, r ModelRequest) (ModelReply, error)

func (f modelFunc) Complete(ctx context.Context, r ModelRequest) (ModelReply, error) {
	return f(ctx, r)
}
