package core

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestRunnerRunsParallelToolCallsConcurrently: the tool steps of one turn
// execute at the same time. Each of the two calls waits until the other
// has started, so run one after the other they would never end.
func TestRunnerRunsParallelToolCallsConcurrently(t *testing.T) {
	started := map[string]chan struct{}{"c1": make(chan struct{}), "c2": make(chan struct{})}
	other := map[string]string{"c1": "c2", "c2": "c1"}
	rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: ScriptedModel{},
		Tools: ToolExecutorFunc(func(_ context.Context, c ToolCall) (any, error) {
			close(started[c.ToolCallID])
			<-started[other[c.ToolCallID]]
			return "met " + other[c.ToolCallID], nil
		})}
	run, err := rn.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1", Messages: user("hi"),
		Config: RunConfig{Model: scripted(turn("", call("c1", "ability/search", map[string]any{"q": "a"}), call("c2", "ability/search", map[string]any{"q": "b"})), turn("done")),
			Tools: []ToolDeclaration{serverTool("ability/search", nil)}, ParallelToolCalls: true}})
	if err != nil {
		t.Fatal(err)
	}
	if run.State.Status != StatusCompleted || len(run.ToolResults) != 2 || run.ToolResults[0].ToolCallID != "c1" || run.ToolResults[0].Result.Result != "met c2" {
		t.Fatalf("status %s, results %+v", run.State.Status, run.ToolResults)
	}
}

// TestRunnerSinkStreamsEachTurnsDeltas: the sink gets a streamed turn's
// thinking as thinking events and its text as token events, each event
// of the turn it belongs to, after that turn's one turn_started.
func TestRunnerSinkStreamsEachTurnsDeltas(t *testing.T) {
	var sunk []Event
	rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: ScriptedModel{},
		Sink: EventSinkFunc(func(_ context.Context, ev Event) error { sunk = append(sunk, ev); return nil })}
	spec := scripted(ScriptedTurn{Content: "Let me look.", Thinking: "hmm", ToolCalls: []ToolCallRequest{call("c1", "ability/search", map[string]any{"q": "a"})}},
		ScriptedTurn{Content: "Found it.", Thinking: "aha"})
	spec.Options = map[string]any{ScriptedChunkChars: float64(3)}
	rn.Tools = ToolExecutorFunc(func(context.Context, ToolCall) (any, error) { return "x", nil })
	run, err := rn.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1", Messages: user("hi"),
		Config: RunConfig{Model: spec, Tools: []ToolDeclaration{serverTool("ability/search", nil)}}})
	if err != nil || run.State.Status != StatusCompleted {
		t.Fatalf("%v %+v", err, run)
	}
	starts := map[int]int{}
	text, thinking := map[int]*strings.Builder{1: {}, 2: {}}, map[int]*strings.Builder{1: {}, 2: {}}
	for i, ev := range sunk {
		switch ev.Type {
		case EventTurnStarted:
			starts[ev.Turn]++
		case EventToken, EventThinking:
			if starts[ev.Turn] != 1 || text[ev.Turn] == nil {
				t.Fatalf("sink event %d: a delta of turn %d, after %d starts of it", i, ev.Turn, starts[ev.Turn])
			}
			b := text[ev.Turn]
			if ev.Type == EventThinking {
				b = thinking[ev.Turn]
			}
			b.WriteString(ev.Data.(*TokenData).Token)
		}
	}
	if starts[1] != 1 || starts[2] != 1 || len(starts) != 2 {
		t.Fatalf("turn starts %v", starts)
	}
	if text[1].String() != "Let me look." || thinking[1].String() != "hmm" || text[2].String() != "Found it." || thinking[2].String() != "aha" {
		t.Fatalf("turn 1 streamed %q thinking %q, turn 2 %q thinking %q", text[1], thinking[1], text[2], thinking[2])
	}
}

// TestResumeCallsTheModelWithItsOwnContext: a run whose driving context
// was cancelled (a tool cancelled it) and that is resumed with another
// context makes its next model call with the new one.
func TestResumeCallsTheModelWithItsOwnContext(t *testing.T) {
	first, cancel := context.WithCancel(context.Background())
	defer cancel()
	model := modelFunc(func(ctx context.Context, req ModelRequest) (ModelReply, error) {
		if err := ctx.Err(); err != nil {
			return ModelReply{}, err
		}
		return ScriptedModel{}.Complete(ctx, req)
	})
	rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: model,
		Tools: ToolExecutorFunc(func(context.Context, ToolCall) (any, error) { cancel(); return "x", nil })}
	run, err := rn.Start(first, StartInput{RunID: "r-1", SessionID: "s-1", Messages: user("hi"),
		Config: RunConfig{Model: scripted(turn("", call("c1", "ability/search", nil)), turn("done")), Tools: []ToolDeclaration{serverTool("ability/search", nil)}}})
	if !errors.Is(err, context.Canceled) || IsTerminal(run.State.Status) {
		t.Fatalf("start: %v, %s", err, run.State.Status)
	}
	if err := rn.Resume(context.Background(), run, Steer{Content: "go on"}); err != nil || run.State.Status != StatusCompleted || FinalContent(run.Transcript) != "done" {
		t.Fatalf("resume: %v, %s, %+v", err, run.State.Status, run.State.Error)
	}
}

// TestResumeARunRebuiltFromItsState: a paused run rebuilt from its
// stored state and transcript (a Run the Runner did not start) resumes
// like the run it was stored from.
func TestResumeARunRebuiltFromItsState(t *testing.T) {
	rn, run, _ := pausedClientRun(t)
	b, err := MarshalState(run.State)
	if err != nil {
		t.Fatal(err)
	}
	st, err := UnmarshalState(b)
	if err != nil {
		t.Fatal(err)
	}
	rebuilt := &Run{State: st, Transcript: append([]Message(nil), run.Transcript...)}
	reqs, _ := st.Pending()
	answer := ClientResult{RequestID: reqs[0].RequestID, Success: true, Result: "free"}
	if err := rn.Resume(context.Background(), rebuilt, answer); err != nil {
		t.Fatal(err)
	}
	if err := rn.Resume(context.Background(), run, answer); err != nil {
		t.Fatal(err)
	}
	if rebuilt.State.Status != StatusCompleted || len(rebuilt.Transcript) != len(run.Transcript) || FinalContent(rebuilt.Transcript) != FinalContent(run.Transcript) {
		t.Fatalf("the rebuilt run: %s, %+v; the original: %s, %+v", rebuilt.State.Status, rebuilt.Transcript, run.State.Status, run.Transcript)
	}
}
